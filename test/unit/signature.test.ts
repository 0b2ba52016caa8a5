import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSignatureVerifier, parseSignatureHeader, signPayload, verifySignature } from '../../shared/signature';
import { parseSecretList } from '../../shared/config-env';
import { signingVerifierFrom } from '../../shared/secrets';
import type { SecretSource } from '../../shared/ports';

const SECRET = 'whsec_current';
const OLD_SECRET = 'whsec_previous';
const NOW = 1_790_000_000;

function hmacHex(secret: string, t: number | string, body: Buffer | string): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

function check(header: string | undefined, body: Buffer | string, options: { secrets?: string[]; now?: number; tolerance?: number } = {}) {
  return verifySignature({
    header,
    rawBody: Buffer.isBuffer(body) ? body : Buffer.from(body, 'utf8'),
    secrets: options.secrets ?? [SECRET],
    nowSeconds: options.now ?? NOW,
    ...(options.tolerance === undefined ? {} : { toleranceSeconds: options.tolerance }),
  });
}

describe('verifySignature', () => {
  const body = '{"id":"e1","type":"run.completed"}';

  it('accepts the header the service sends', () => {
    expect(check(signPayload(SECRET, NOW, body), body)).toEqual({ ok: true, timestamp: NOW });
  });

  it.each([
    ['emoji and multibyte text', '{"text":"café 🚀 東京 👩‍👩‍👧"}'],
    ['CRLF line endings', '{\r\n  "id": "e1"\r\n}\r\n'],
    ['a trailing newline', '{"id":"e1"}\n'],
  ])('signs the exact bytes of a body with %s', (_label, text) => {
    const bytes = Buffer.from(text, 'utf8');
    expect(check(signPayload(SECRET, NOW, bytes), bytes).ok).toBe(true);
    // The same JSON re-serialised, or the newline dropped, is different bytes and must fail.
    const altered = Buffer.from(text.replace(/\r?\n$/, '').replace(/\r\n/g, '\n') + ' ', 'utf8');
    expect(check(signPayload(SECRET, NOW, bytes), altered)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('reports a missing or blank header', () => {
    expect(check(undefined, body)).toEqual({ ok: false, reason: 'missing_header' });
    expect(check('   ', body)).toEqual({ ok: false, reason: 'missing_header' });
  });

  it.each(['t=123abc,v1=00', 't=,v1=00', 't=-5,v1=00', 't=1.5,v1=00', 't=0x10,v1=00', 'v1=abc', 'garbage', 't = ', 't=99999999999999999999,v1=00'])(
    'calls "%s" malformed',
    (header) => {
      expect(check(header, body)).toEqual({ ok: false, reason: 'malformed_header' });
    },
  );

  it('accepts when the second of several v1 entries matches', () => {
    const header = `t=${NOW},v1=${'0'.repeat(64)},v1=${hmacHex(SECRET, NOW, body)}`;
    expect(check(header, body).ok).toBe(true);
  });

  it('ignores unknown schemes and still checks v1', () => {
    const header = `t=${NOW},v0=deadbeef,v2=${'a'.repeat(64)},v1=${hmacHex(SECRET, NOW, body)},scheme=x`;
    expect(check(header, body).ok).toBe(true);
    expect(check(`t=${NOW},v0=${hmacHex(SECRET, NOW, body)}`, body)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('handles a repeated header that arrived comma-joined', () => {
    const first = `t=${NOW},v1=${'f'.repeat(64)}`;
    const second = signPayload(SECRET, NOW, body);
    expect(check(`${first}, ${second}`, body).ok).toBe(true);
    expect(parseSignatureHeader(`${first}, ${second}`)).toHaveLength(2);
  });

  it('never throws on signatures of the wrong length', () => {
    const good = hmacHex(SECRET, NOW, body);
    for (const v1 of ['', 'ab', good.slice(0, 63), `${good}0`, `${good}${good}`, 'zz'.repeat(32)]) {
      expect(check(`t=${NOW},v1=${v1}`, body)).toEqual({ ok: false, reason: 'no_matching_signature' });
    }
  });

  it('accepts upper-case hex of the right digest', () => {
    expect(check(`t=${NOW},v1=${hmacHex(SECRET, NOW, body).toUpperCase()}`, body).ok).toBe(true);
  });

  it('allows exactly 300 s of skew either way and no more', () => {
    for (const skew of [300, -300]) {
      expect(check(signPayload(SECRET, NOW - skew, body), body).ok).toBe(true);
    }
    expect(check(signPayload(SECRET, NOW - 301, body), body)).toEqual({ ok: false, reason: 'too_old' });
    expect(check(signPayload(SECRET, NOW + 301, body), body)).toEqual({ ok: false, reason: 'too_new' });
  });

  it('takes a configured tolerance', () => {
    expect(check(signPayload(SECRET, NOW - 61, body), body, { tolerance: 60 })).toEqual({ ok: false, reason: 'too_old' });
    expect(check(signPayload(SECRET, NOW - 60, body), body, { tolerance: 60 }).ok).toBe(true);
  });

  it('reports a forged stale signature as no match, not as stale', () => {
    expect(check(signPayload('wrong', NOW - 1000, body), body)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('accepts the old and the new secret during rotation, and neither other', () => {
    const secrets = [OLD_SECRET, SECRET];
    expect(check(signPayload(OLD_SECRET, NOW, body), body, { secrets }).ok).toBe(true);
    expect(check(signPayload(SECRET, NOW, body), body, { secrets }).ok).toBe(true);
    expect(check(signPayload('whsec_other', NOW, body), body, { secrets })).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('works with a configured secret that had trailing whitespace', () => {
    const secrets = parseSecretList(`${SECRET}  \n`, 'SIGNING_SECRETS');
    expect(secrets).toEqual([SECRET]);
    expect(check(signPayload(SECRET, NOW, body), body, { secrets }).ok).toBe(true);
  });

  it('keeps secrets out of results', () => {
    const verifier = createSignatureVerifier({ secrets: [SECRET] });
    const results = [verifier('t=1,v1=00', Buffer.from(body), NOW), verifier(undefined, Buffer.from(body), NOW)];
    expect(JSON.stringify(results)).not.toContain(SECRET);
  });
});

describe('parseSecretList', () => {
  it('reads JSON arrays, lines and commas', () => {
    expect(parseSecretList('["a", " b "]', 'X')).toEqual(['a', 'b']);
    expect(parseSecretList('a\nb\n', 'X')).toEqual(['a', 'b']);
    expect(parseSecretList('a,b', 'X')).toEqual(['a', 'b']);
  });

  it('names the variable when empty or not strings', () => {
    expect(() => parseSecretList('  ', 'SIGNING_SECRETS')).toThrow(/SIGNING_SECRETS/);
    expect(() => parseSecretList('[1]', 'SIGNING_SECRETS')).toThrow(/only strings/);
  });
});

describe('signingVerifierFrom', () => {
  const body = '{"id":"e1","type":"run.completed"}';

  /** A secret source that answers with the given steps in turn (a value, or an error to throw). */
  function scriptedSource(steps: (string | Error)[]): SecretSource & { reads: number } {
    const source = {
      description: 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:signing',
      reads: 0,
      get(): Promise<string> {
        const step = steps[Math.min(source.reads++, steps.length - 1)];
        return step instanceof Error ? Promise.reject(step) : Promise.resolve(step ?? '');
      },
    };
    return source;
  }

  it('keeps the last good verifier while the secret cannot be read, and picks up a rotation once it can', async () => {
    const outage = new Error('Secrets Manager timed out');
    const source = scriptedSource([`["${SECRET}"]`, outage, outage, `["${OLD_SECRET}"]`]);
    const resolve = signingVerifierFrom(source, 300);
    const first = await resolve();
    expect(first(signPayload(SECRET, NOW, body), Buffer.from(body), NOW).ok).toBe(true);
    // The cache expired and Secrets Manager is down: deliveries are still verified, not answered 503.
    for (let i = 0; i < 2; i++) {
      const during = await resolve();
      expect(during).toBe(first);
      expect(during(signPayload(SECRET, NOW, body), Buffer.from(body), NOW).ok).toBe(true);
    }
    const rotated = await resolve();
    expect(rotated(signPayload(OLD_SECRET, NOW, body), Buffer.from(body), NOW).ok).toBe(true);
    expect(rotated(signPayload(SECRET, NOW, body), Buffer.from(body), NOW)).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(source.reads).toBe(4);
  });

  it('rethrows when no verifier was ever built', async () => {
    const outage = new Error('Secrets Manager timed out');
    const resolve = signingVerifierFrom(scriptedSource([outage, `["${SECRET}"]`]), 300);
    await expect(resolve()).rejects.toBe(outage);
    // Once the secret can be read, the verifier is built as usual.
    const verifier = await resolve();
    expect(verifier(signPayload(SECRET, NOW, body), Buffer.from(body), NOW).ok).toBe(true);
  });
});
