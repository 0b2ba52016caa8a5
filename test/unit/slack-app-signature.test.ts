import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import {
  createSlackRequestVerifier,
  signSlackRequest,
  verifySlackRequest,
  SLACK_SIGNATURE_HEADER,
  SLACK_TIMESTAMP_HEADER,
  MAX_FUTURE_SKEW_SECONDS,
} from '../../shared/slack-request-signature';

// Slack's documented example (api.slack.com/authentication/verifying-requests-from-slack).
const DOC_SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const DOC_TIMESTAMP = '1531420618';
const DOC_BODY =
  'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c';
const DOC_SIGNATURE = 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503';

const SECRET = 'signing-secret-for-tests';
const NOW = 1_760_000_000;
const BODY = 'command=%2Fvisibility&text=list&channel_id=C1&user_id=U1&response_url=https%3A%2F%2Fhooks.slack.com%2Fx';

function mixedCase(hex: string): string {
  return [...hex].map((c, i) => (i % 2 === 0 ? c.toUpperCase() : c)).join('');
}

function signed(body: string, timestamp = NOW, secret = SECRET) {
  const headers = signSlackRequest(secret, timestamp, body);
  return { signature: headers[SLACK_SIGNATURE_HEADER], timestamp: headers[SLACK_TIMESTAMP_HEADER], rawBody: body };
}

describe('Slack request signature', () => {
  it("accepts Slack's documented example", () => {
    const check = verifySlackRequest({
      signingSecrets: [DOC_SECRET],
      signature: DOC_SIGNATURE,
      timestamp: DOC_TIMESTAMP,
      rawBody: DOC_BODY,
      nowSeconds: Number(DOC_TIMESTAMP) + 10,
    });
    expect(check).toEqual({ ok: true, timestamp: Number(DOC_TIMESTAMP), mac: DOC_SIGNATURE.slice('v0='.length) });
  });

  it('signs exactly as Slack does', () => {
    expect(signSlackRequest(DOC_SECRET, Number(DOC_TIMESTAMP), DOC_BODY)[SLACK_SIGNATURE_HEADER]).toBe(DOC_SIGNATURE);
  });

  const verify = createSlackRequestVerifier({ signingSecrets: [SECRET] });

  it('accepts a fresh request signed with the secret, as string or Buffer', () => {
    expect(verify({ ...signed(BODY), nowSeconds: NOW })).toMatchObject({ ok: true, timestamp: NOW });
    expect(verify({ ...signed(BODY), rawBody: Buffer.from(BODY), nowSeconds: NOW }).ok).toBe(true);
  });

  it.each([
    ['no signature', { signature: undefined }],
    ['blank signature', { signature: '  ' }],
    ['no timestamp', { timestamp: undefined }],
    ['blank timestamp', { timestamp: '' }],
  ])('refuses %s as missing', (_, override) => {
    expect(verify({ ...signed(BODY), ...override, nowSeconds: NOW })).toEqual({ ok: false, reason: 'missing' });
  });

  it.each([
    ['another scheme', { signature: `v1=${'a'.repeat(64)}` }],
    ['a short digest', { signature: `v0=${'a'.repeat(63)}` }],
    ['a non-hex digest', { signature: `v0=${'g'.repeat(64)}` }],
    ['a timestamp with letters', { timestamp: '17x' }],
    ['a negative timestamp', { timestamp: '-5' }],
  ])('refuses %s as malformed', (_, override) => {
    expect(verify({ ...signed(BODY), ...override, nowSeconds: NOW })).toEqual({ ok: false, reason: 'malformed' });
  });

  it('accepts up to 5 minutes of age and refuses older as stale', () => {
    expect(verify({ ...signed(BODY, NOW - 300), nowSeconds: NOW }).ok).toBe(true);
    expect(verify({ ...signed(BODY, NOW - 301), nowSeconds: NOW })).toEqual({ ok: false, reason: 'stale' });
  });

  it("refuses a timestamp more than the clocks' skew ahead of now as future (it would outlive its replay record)", () => {
    expect(verify({ ...signed(BODY, NOW + MAX_FUTURE_SKEW_SECONDS), nowSeconds: NOW }).ok).toBe(true);
    expect(verify({ ...signed(BODY, NOW + MAX_FUTURE_SKEW_SECONDS + 1), nowSeconds: NOW })).toEqual({ ok: false, reason: 'future' });
    expect(verify({ ...signed(BODY, NOW + 300), nowSeconds: NOW })).toEqual({ ok: false, reason: 'future' });
  });

  it('gives the MAC in one spelling, however the header spells its hex', () => {
    const { signature, ...rest } = signed(BODY);
    const hex = signature?.slice('v0='.length) ?? '';
    const checks = [hex, hex.toUpperCase(), mixedCase(hex)].map((spelling) =>
      verify({ ...rest, signature: `v0=${spelling}`, nowSeconds: NOW }),
    );
    expect(checks.map((check) => (check.ok ? check.mac : check.reason))).toEqual([hex, hex, hex]);
  });

  it('refuses another secret, a changed body and a moved timestamp as mismatch', () => {
    expect(verify({ ...signed(BODY, NOW, 'other-secret'), nowSeconds: NOW })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verify({ ...signed(BODY), rawBody: `${BODY}&x=1`, nowSeconds: NOW })).toEqual({ ok: false, reason: 'mismatch' });
    expect(verify({ ...signed(BODY), timestamp: String(NOW + 1), nowSeconds: NOW })).toEqual({ ok: false, reason: 'mismatch' });
  });

  it('accepts either secret while one is being rotated, and nothing with no secret', () => {
    const rotating = createSlackRequestVerifier({ signingSecrets: ['old-secret', SECRET] });
    expect(rotating({ ...signed(BODY), nowSeconds: NOW }).ok).toBe(true);
    expect(rotating({ ...signed(BODY, NOW, 'old-secret'), nowSeconds: NOW }).ok).toBe(true);
    expect(createSlackRequestVerifier({ signingSecrets: [''] })({ ...signed(BODY, NOW, ''), nowSeconds: NOW })).toEqual({
      ok: false,
      reason: 'mismatch',
    });
  });

  it('honours a configured tolerance', () => {
    const strict = createSlackRequestVerifier({ signingSecrets: [SECRET], toleranceSeconds: 10 });
    expect(strict({ ...signed(BODY, NOW - 11), nowSeconds: NOW })).toEqual({ ok: false, reason: 'stale' });
  });
});

describe('Slack request signature (properties)', () => {
  const verify = createSlackRequestVerifier({ signingSecrets: [SECRET] });

  it('every body signed now verifies', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.integer({ min: -300, max: MAX_FUTURE_SKEW_SECONDS }), (body, skew) => {
        expect(verify({ ...signed(body, NOW + skew), nowSeconds: NOW }).ok).toBe(true);
      }),
    );
  });

  it('any change to a signed body is a mismatch', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1 }), fc.string({ minLength: 1 }), fc.nat(), (body, insert, at) => {
        const position = at % (body.length + 1);
        const changed = body.slice(0, position) + insert + body.slice(position);
        expect(verify({ ...signed(body), rawBody: changed, nowSeconds: NOW })).toEqual({ ok: false, reason: 'mismatch' });
      }),
    );
  });

  it('never throws and never accepts arbitrary headers', () => {
    fc.assert(
      fc.property(fc.option(fc.string()), fc.option(fc.string()), fc.string(), fc.double(), (signature, timestamp, body, now) => {
        const check = verify({ signature: signature ?? undefined, timestamp: timestamp ?? undefined, rawBody: body, nowSeconds: now });
        expect(check.ok).toBe(false);
      }),
    );
  });

  it('a flipped hex digit of a valid signature is a mismatch', () => {
    const good = signed(BODY);
    fc.assert(
      fc.property(fc.integer({ min: 3, max: 66 }), (index) => {
        const chars = [...good.signature!];
        chars[index] = chars[index] === '0' ? '1' : '0';
        expect(verify({ ...good, signature: chars.join(''), nowSeconds: NOW })).toEqual({ ok: false, reason: 'mismatch' });
      }),
    );
  });
});
