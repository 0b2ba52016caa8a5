/**
 * The signing verifier as the signing secret changes and fails (issue 11): a malformed value keeps
 * the last good secrets and alarms; a failed read keeps them for a bounded time; failed reads back off.
 * A fixed clock crosses the time boundaries.
 */
import { describe, expect, it } from 'vitest';
import { signingVerifierFrom, FIRST_BACKOFF_MS } from '../../shared/secrets';
import { signPayload } from '../../shared/signature';
import { SecretNotSet } from '../../shared/errors';
import type { SecretSource } from '../../shared/ports';
import { RecordingObserver } from '../support/recording-observer';

const SECRET = 'whsec_current';
const OLD_SECRET = 'whsec_previous';
const NOW = 1_790_000_000;
const BODY = Buffer.from('{"id":"e1","type":"run.completed"}');
const ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing';
const CACHE_MS = 300_000;
const HOUR_MS = 3_600_000;

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

function setup(steps: (string | Error)[]) {
  const source = scriptedSource(steps);
  const observer = new RecordingObserver();
  const clock = { ms: NOW * 1000, now: () => clock.ms };
  const resolve = signingVerifierFrom(source, { toleranceSeconds: 300, clock, log: observer, metrics: observer, maxBackoffMs: CACHE_MS });
  const verifies = async (secret: string) => (await resolve())(signPayload(secret, NOW, BODY), BODY, NOW).ok;
  return { source, observer, clock, resolve, verifies };
}

describe('signingVerifierFrom', () => {
  it('picks up a rotation as soon as the secret reads differently', async () => {
    const { verifies } = setup([`["${SECRET}"]`, `["${OLD_SECRET}", "${SECRET}"]`, `["${OLD_SECRET}"]`]);
    expect(await verifies(SECRET)).toBe(true);
    expect(await verifies(OLD_SECRET)).toBe(true);
    expect(await verifies(SECRET)).toBe(false);
  });

  it('keeps the last good secrets when a new value is malformed, logs it once and counts every use', async () => {
    const { verifies, observer } = setup([`["${SECRET}"]`, '["s3"', '["s3"', '["s3"', `["${OLD_SECRET}"]`]);
    expect(await verifies(SECRET)).toBe(true);
    for (let i = 0; i < 3; i++) expect(await verifies(SECRET)).toBe(true);
    expect(observer.countOf('SigningSecretsInvalid')).toBe(3);
    const logged = observer.entries.filter((e) => e.level === 'error');
    expect(logged).toHaveLength(1);
    expect(logged[0]!.fields['problem']).toMatch(/must be a JSON array of strings/);
    expect(JSON.stringify(observer.entries)).not.toContain('s3');
    // Fixed: the new value takes over.
    expect(await verifies(OLD_SECRET)).toBe(true);
    expect(await verifies(SECRET)).toBe(false);
  });

  it('refuses a comma list (a value that never parses) with no good secrets to fall back on', async () => {
    const { resolve, observer } = setup(['a,b']);
    await expect(resolve()).rejects.toThrow(/must be a JSON array of strings/);
    expect(observer.countOf('SigningSecretsInvalid')).toBe(1);
  });

  it('keeps the last good secrets for at most an hour after a failed read (placeholder, deleted, AccessDenied), then refuses with a clear error', async () => {
    const denied = Object.assign(new Error('User is not authorized to perform: secretsmanager:GetSecretValue'), {
      name: 'AccessDeniedException',
    });
    for (const failure of [
      new SecretNotSet(ARN),
      denied,
      Object.assign(new Error("Secrets Manager can't find the specified secret."), { name: 'ResourceNotFoundException' }),
    ]) {
      const { verifies, resolve, clock, observer } = setup([`["${SECRET}"]`, failure]);
      expect(await verifies(SECRET)).toBe(true);
      clock.ms += HOUR_MS - 1;
      expect(await verifies(SECRET)).toBe(true);
      clock.ms += CACHE_MS; // past the hour, and past the backoff
      await expect(resolve()).rejects.toThrow(/unreadable for over 60 minutes; deliveries are refused \(503\)/);
      expect(observer.countOf('SigningSecretsUnreadable')).toBe(2);
    }
  });

  it('backs off after a failed read (1 s doubling up to the cache age) instead of reading on every delivery', async () => {
    const outage = new Error('Secrets Manager timed out');
    const { source, resolve, clock, verifies } = setup([`["${SECRET}"]`, outage]);
    await resolve();
    const waits: number[] = [];
    let readsBefore = source.reads;
    for (let step = 0; step < 12; step++) {
      // Deliveries keep arriving every 100 ms; count the time between reads.
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
    const { resolve, clock, verifies } = setup([outage, `["${SECRET}"]`]);
    await expect(resolve()).rejects.toBe(outage);
    await expect(resolve()).rejects.toBe(outage); // within the backoff: not read again
    clock.ms += FIRST_BACKOFF_MS;
    expect(await verifies(SECRET)).toBe(true);
  });
});
