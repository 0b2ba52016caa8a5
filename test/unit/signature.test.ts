import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  createSignatureVerifier,
  MAX_SIGNATURE_ENTRIES,
  MAX_SIGNATURE_GROUPS,
  parseSignatureHeader,
  signPayload,
  verifySignature,
} from '../../shared/signature';
import { parseSecretList } from '../../shared/config-env';

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

  it.each([
    't=123abc,v1=00',
    't=,v1=00',
    't=-5,v1=00',
    't=1.5,v1=00',
    't=0x10,v1=00',
    'v1=abc',
    'garbage',
    't = ',
    't=99999999999999999999,v1=00',
  ])('calls "%s" malformed', (header) => {
    expect(check(header, body)).toEqual({ ok: false, reason: 'malformed_header' });
  });

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

  // Changed on purpose (issue 11): groups outside the tolerance are no longer hashed, so a forged
  // stale header is reported as stale (was no_matching_signature). Both are 401.
  it('reports a stale header as stale without hashing it, forged or not', () => {
    expect(check(signPayload('wrong', NOW - 1000, body), body)).toEqual({ ok: false, reason: 'too_old' });
    // With one group inside the tolerance, a forged one is no match.
    expect(check(`${signPayload('wrong', NOW - 1000, body)},${signPayload('wrong', NOW, body)}`, body)).toEqual({
      ok: false,
      reason: 'no_matching_signature',
    });
  });

  it('accepts the old and the new secret during rotation, and neither other', () => {
    const secrets = [OLD_SECRET, SECRET];
    expect(check(signPayload(OLD_SECRET, NOW, body), body, { secrets }).ok).toBe(true);
    expect(check(signPayload(SECRET, NOW, body), body, { secrets }).ok).toBe(true);
    expect(check(signPayload('whsec_other', NOW, body), body, { secrets })).toEqual({ ok: false, reason: 'no_matching_signature' });
  });

  it('works with a configured secret that had trailing whitespace', () => {
    const secrets = parseSecretList(`["${SECRET}  \\n"]`, 'SIGNING_SECRETS');
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
  it('reads a JSON array of strings, keeping commas inside a secret', () => {
    expect(parseSecretList('["a", " b "]', 'X')).toEqual(['a', 'b']);
    expect(parseSecretList(' ["a,b"]\n', 'X')).toEqual(['a,b']);
  });

  it('refuses lines and comma lists (a secret may hold a comma), saying what to put', () => {
    for (const raw of ['a,b', 'a\nb\n', 'whsec_x', '{"a":"b"}', '"a"']) {
      expect(() => parseSecretList(raw, 'SIGNING_SECRETS'), raw).toThrow(
        /SIGNING_SECRETS must be a JSON array of strings such as \["whsec_current"\]/,
      );
    }
  });

  it('names the variable when empty or not strings', () => {
    expect(() => parseSecretList('  ', 'SIGNING_SECRETS')).toThrow(/SIGNING_SECRETS/);
    expect(() => parseSecretList('[1]', 'SIGNING_SECRETS')).toThrow(/only strings/);
  });
});

describe('signature work is bounded', () => {
  const body = Buffer.from('{"id":"e1","type":"run.completed"}'.padEnd(60_000, ' '));
  const secrets = [OLD_SECRET, SECRET];

  function countingVerifier(): { verify: (header: string) => ReturnType<ReturnType<typeof createSignatureVerifier>>; hmacs: () => number } {
    let hmacs = 0;
    const verifier = createSignatureVerifier({ secrets, onHmac: () => (hmacs += 1) });
    return { verify: (header) => verifier(header, body, NOW), hmacs: () => hmacs };
  }

  const forged = (t: number, n = 1) => [`t=${t}`, ...Array.from({ length: n }, (_, i) => `v1=${hmacHex('forged', t + i, 'x')}`)].join(',');

  it('costs one HMAC per secret for the header the service sends', () => {
    const { verify, hmacs } = countingVerifier();
    expect(verify(signPayload(OLD_SECRET, NOW, body)).ok).toBe(true);
    expect(hmacs()).toBe(1);
    expect(verify(forged(NOW)).ok).toBe(false);
    expect(hmacs()).toBe(1 + secrets.length);
  });

  it('hashes no group outside the tolerance', () => {
    const { verify, hmacs } = countingVerifier();
    const stale = Array.from({ length: MAX_SIGNATURE_GROUPS }, (_, i) => forged(NOW - 301 - i, 2)).join(',');
    expect(verify(stale)).toEqual({ ok: false, reason: 'too_old' });
    expect(hmacs()).toBe(0);
  });

  it('hashes each distinct t once per secret, however many groups repeat it', () => {
    const { verify, hmacs } = countingVerifier();
    const repeated = [forged(NOW, 2), forged(NOW, 2), forged(NOW + 1, 2), forged(NOW, 2)].join(',');
    expect(verify(repeated)).toEqual({ ok: false, reason: 'no_matching_signature' });
    expect(hmacs()).toBe(2 * secrets.length);
  });

  it(`refuses more than ${MAX_SIGNATURE_GROUPS} groups or ${MAX_SIGNATURE_ENTRIES} v1 entries as malformed, before any hashing`, () => {
    const { verify, hmacs } = countingVerifier();
    const groups = Array.from({ length: MAX_SIGNATURE_GROUPS + 1 }, (_, i) => forged(NOW - i)).join(',');
    expect(verify(groups)).toEqual({ ok: false, reason: 'malformed_header' });
    expect(verify(forged(NOW, MAX_SIGNATURE_ENTRIES + 1))).toEqual({ ok: false, reason: 'malformed_header' });
    // 142 groups (the flood that cost 27 forged requests' work) is refused the same way.
    expect(verify(Array.from({ length: 142 }, (_, i) => forged(NOW - (i % 300))).join(','))).toEqual({
      ok: false,
      reason: 'malformed_header',
    });
    expect(hmacs()).toBe(0);
    // At the caps, a genuine signature among forged ones still verifies.
    const atCaps = [...Array.from({ length: MAX_SIGNATURE_GROUPS - 1 }, (_, i) => forged(NOW - i, 2)), signPayload(SECRET, NOW, body)].join(
      ',',
    );
    expect(parseSignatureHeader(atCaps)).not.toBeNull();
    expect(verify(atCaps)).toEqual({ ok: true, timestamp: NOW });
    expect(hmacs()).toBeLessThanOrEqual(MAX_SIGNATURE_GROUPS * secrets.length);
  });
});
