/**
 * The one cache of signing-secret verifiers (shared/secrets `verifierFromSecret`), run for both
 * secrets that verify signatures: the webhook's signing secrets and the Slack app's signing secret.
 * A malformed value keeps the last good secrets and alarms; a failed read keeps them for a bounded
 * time, then refuses saying how to fix it; failed reads back off. A fixed clock crosses the time
 * boundaries.
 */
import { describe, expect, it } from 'vitest';
import { signingVerifierFrom, FIRST_BACKOFF_MS } from '../../shared/secrets';
import { signPayload } from '../../shared/signature';
import { signSlackRequest } from '../../shared/slack-request-signature';
import { slackVerifierFrom } from '../../shared/slack-app/verifier-source';
import { INGEST_METRICS, SLACK_APP_METRICS } from '../../shared/contracts';
import { NeedsOperatorFix, SecretNotSet } from '../../shared/errors';
import type { Clock, SecretReadOptions, SecretSource } from '../../shared/ports';
import { RecordingObserver } from '../support/recording-observer';

const SECRET = 'whsec_current';
const OLD_SECRET = 'whsec_previous';
const NOW = 1_790_000_000;
const BODY = Buffer.from('{"id":"e1","type":"run.completed"}');
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing';
const CACHE_MS = 300_000;
const HOUR_MS = 3_600_000;

interface CacheOptions {
  clock: Clock;
  log: RecordingObserver;
  metrics: RecordingObserver;
  maxBackoffMs: number;
}

/** One secret kind as the cache serves it: its values, its metrics and how a request signed with a secret verifies. */
interface Kind {
  name: string;
  /** The secret's value holding these secrets, as an operator puts it. */
  value(...secrets: string[]): string;
  /** Values that never parse, and what the error says. */
  malformed: string;
  neverParses: string;
  problem: RegExp;
  fix: RegExp;
  invalidMetric: string;
  unreadableMetric: string;
  refused: RegExp;
  verifies(
    source: SecretSource,
    options: CacheOptions,
  ): { resolve: () => Promise<unknown>; verifies: (secret: string) => Promise<boolean> };
}

const webhook: Kind = {
  name: 'webhook signing secrets',
  value: (...secrets) => JSON.stringify(secrets),
  malformed: '["s3"',
  neverParses: 'a,b',
  problem: /must be a JSON array of strings/,
  fix: /JSON array of strings.*npx bridge secrets signing add/,
  invalidMetric: INGEST_METRICS.signingSecretsInvalid,
  unreadableMetric: INGEST_METRICS.signingSecretsUnreadable,
  refused: /unreadable for over 60 minutes; deliveries are refused \(503\)/,
  verifies(source, options) {
    const resolve = signingVerifierFrom(source, { toleranceSeconds: 300, ...options });
    return { resolve, verifies: async (secret) => (await resolve())(signPayload(secret, NOW, BODY), BODY, NOW).ok };
  },
};

const slack: Kind = {
  name: 'Slack signing secret',
  // As Slack shows it: one plain value; a JSON array only while it is regenerated.
  value: (...secrets) => (secrets.length === 1 ? `${secrets[0]}\n` : JSON.stringify(secrets)),
  malformed: 's3 s4',
  neverParses: 'a\nb',
  problem: /must be the signing secret as Slack shows it/,
  fix: /as Slack shows it.*npx bridge secrets set slack-signing-secret/,
  invalidMetric: SLACK_APP_METRICS.slackSigningSecretInvalid,
  unreadableMetric: SLACK_APP_METRICS.slackSigningSecretUnreadable,
  refused: /unreadable for over 60 minutes; Slack requests are refused \(503\)/,
  verifies(source, options) {
    const resolve = slackVerifierFrom(source, { toleranceSeconds: 300, ...options });
    return {
      resolve,
      verifies: async (secret) => {
        const headers = signSlackRequest(secret, NOW, BODY);
        const verify = await resolve();
        return verify({
          signature: headers['x-slack-signature'],
          timestamp: headers['x-slack-request-timestamp'],
          rawBody: BODY,
          nowSeconds: NOW,
        }).ok;
      },
    };
  },
};

/** A secret source that answers with the given steps in turn (a value, or an error to throw). */
function scriptedSource(steps: (string | Error)[]): SecretSource & { reads: number } {
  const source = {
    description: ARN,
    reads: 0,
    get(): Promise<string> {
      const step = steps[Math.min(source.reads++, steps.length - 1)];
      return step instanceof Error ? Promise.reject(step) : Promise.resolve(step ?? '');
    },
  };
  return source;
}

function setup(kind: Kind, steps: (string | Error)[]) {
  const source = scriptedSource(steps);
  const observer = new RecordingObserver();
  const clock = { ms: NOW * 1000, now: () => clock.ms };
  const { resolve, verifies } = kind.verifies(source, { clock, log: observer, metrics: observer, maxBackoffMs: CACHE_MS });
  return { source, observer, clock, resolve, verifies };
}

describe.each([webhook, slack])('the verifier cache of the $name', (kind) => {
  it('picks up a rotation as soon as the secret reads differently', async () => {
    const { verifies } = setup(kind, [kind.value(SECRET), kind.value(OLD_SECRET, SECRET), kind.value(OLD_SECRET)]);
    expect(await verifies(SECRET)).toBe(true);
    expect(await verifies(OLD_SECRET)).toBe(true);
    expect(await verifies(SECRET)).toBe(false);
  });

  it('keeps the last good secrets when a new value is malformed, logs it once with the fix and counts every use', async () => {
    const { verifies, observer } = setup(kind, [
      kind.value(SECRET),
      kind.malformed,
      kind.malformed,
      kind.malformed,
      kind.value(OLD_SECRET),
    ]);
    expect(await verifies(SECRET)).toBe(true);
    for (let i = 0; i < 3; i++) expect(await verifies(SECRET)).toBe(true);
    expect(observer.countOf(kind.invalidMetric)).toBe(3);
    const logged = observer.entries.filter((e) => e.level === 'error');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.fields['problem']).toMatch(kind.problem);
    expect(logged[0]!.fields['fix']).toMatch(kind.fix);
    expect(JSON.stringify(observer.entries)).not.toContain('s3');
    // Fixed: the new value takes over.
    expect(await verifies(OLD_SECRET)).toBe(true);
    expect(await verifies(SECRET)).toBe(false);
  });

  it('refuses a value that never parses with no good secrets to fall back on, saying what to put', async () => {
    const { resolve, observer } = setup(kind, [kind.neverParses]);
    await expect(resolve()).rejects.toThrow(kind.problem);
    expect(observer.countOf(kind.invalidMetric)).toBe(1);
  });

  it('keeps the last good secrets for at most an hour after a failed read (placeholder, deleted, AccessDenied), then refuses saying how to fix it', async () => {
    const denied = Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), {
      name: 'AccessDeniedException',
    });
    for (const failure of [
      new SecretNotSet(ARN),
      denied,
      Object.assign(new Error("Secrets Manager can't find the specified secret."), { name: 'ResourceNotFoundException' }),
    ]) {
      const { verifies, resolve, clock, observer } = setup(kind, [kind.value(SECRET), failure]);
      expect(await verifies(SECRET)).toBe(true);
      clock.ms += HOUR_MS - 1;
      expect(await verifies(SECRET)).toBe(true);
      clock.ms += CACHE_MS; // past the hour, and past the backoff
      const refusal = await resolve().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refusal).toBeInstanceOf(NeedsOperatorFix);
      // The callers log name and message only: the message itself says what to do.
      expect((refusal as Error).message).toMatch(kind.refused);
      expect((refusal as Error).message).toMatch(/Fix: restore the secret .*secretsmanager:GetSecretValue/);
      expect((refusal as Error).message).toMatch(kind.fix);
      expect(observer.countOf(kind.unreadableMetric)).toBe(2);
    }
  });

  it('backs off after a failed read (1 s doubling up to the cache age) instead of reading on every request', async () => {
    const outage = new Error('Secrets Manager timed out');
    const { source, resolve, clock, verifies } = setup(kind, [kind.value(SECRET), outage]);
    await resolve();
    const waits: number[] = [];
    let readsBefore = source.reads;
    for (let step = 0; step < 12; step++) {
      // Requests keep arriving every 100 ms; count the time between reads.
      let waited = 0;
      expect(await verifies(SECRET)).toBe(true);
      do {
        await resolve();
        clock.ms += 100;
        waited += 100;
      } while (source.reads === readsBefore && waited < 2 * CACHE_MS);
      waits.push(waited);
      readsBefore = source.reads;
    }
    // The first read fails at once; each next one waits twice as long, capped at the cache age.
    expect(waits[0]).toBe(100);
    expect(waits.slice(1, 6)).toEqual([FIRST_BACKOFF_MS, 2000, 4000, 8000, 16_000]);
    expect(waits.slice(-2)).toEqual([CACHE_MS, CACHE_MS]);
  });

  it('rethrows when no verifier was ever built, and builds it once the secret can be read (after the backoff)', async () => {
    const outage = new Error('Secrets Manager timed out');
    const { resolve, clock, verifies, source } = setup(kind, [outage, kind.value(SECRET)]);
    await expect(resolve()).rejects.toBe(outage);
    await expect(resolve()).rejects.toBe(outage); // within the backoff: not read again
    expect(source.reads).toBe(1);
    clock.ms += FIRST_BACKOFF_MS;
    expect(await verifies(SECRET)).toBe(true);
  });
});

describe('the verifier cache in a slow outage', () => {
  /** A source whose reads take `takesMs` on the clock, then fail; it records what each read was given. */
  function slowFailingSource(clock: { ms: number }, takesMs: number) {
    const source = {
      description: ARN,
      reads: [] as (SecretReadOptions | undefined)[],
      get(options?: SecretReadOptions): Promise<string> {
        source.reads.push(options);
        clock.ms += takesMs;
        return Promise.reject(new Error('ServiceUnavailable'));
      },
    };
    return source;
  }

  it('counts the backoff from when the read failed, not from when it started', async () => {
    const clock = { ms: NOW * 1000, now: () => clock.ms };
    const observer = new RecordingObserver();
    // Each read takes longer than the first backoff: counted from its start, the backoff would be over when it fails.
    const source = slowFailingSource(clock, 3 * FIRST_BACKOFF_MS);
    const resolve = slackVerifierFrom(source, { toleranceSeconds: 300, clock, log: observer, metrics: observer, maxBackoffMs: CACHE_MS });
    await expect(resolve()).rejects.toThrow('ServiceUnavailable');
    await expect(resolve()).rejects.toThrow('ServiceUnavailable');
    expect(source.reads).toHaveLength(1);
    clock.ms += FIRST_BACKOFF_MS;
    await expect(resolve()).rejects.toThrow('ServiceUnavailable');
    expect(source.reads).toHaveLength(2);
  });

  it('passes its read timeout to every read, and none when it has none', async () => {
    const clock = { ms: NOW * 1000, now: () => clock.ms };
    const observer = new RecordingObserver();
    const bounded = slowFailingSource(clock, 0);
    const options = { toleranceSeconds: 300, clock, log: observer, metrics: observer, maxBackoffMs: CACHE_MS };
    await expect(slackVerifierFrom(bounded, { ...options, readTimeoutMs: 1000 })()).rejects.toThrow();
    expect(bounded.reads).toEqual([{ timeoutMs: 1000 }]);
    const unbounded = slowFailingSource(clock, 0);
    await expect(slackVerifierFrom(unbounded, options)()).rejects.toThrow();
    expect(unbounded.reads).toEqual([undefined]);
  });
});
