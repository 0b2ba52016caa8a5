/**
 * Fuzzing the signature verifier with fast-check (fixed seed, printed): random and malformed
 * headers and bodies, and mutations of valid deliveries. The verifier must never throw, and must
 * answer ok only when an independent check agrees: the header carries a `v1` that is the HMAC of
 * these exact body bytes, under a configured secret, at the accepted timestamp, which is within the
 * tolerance of now. Whitespace, upper-case hex, repeated or reordered entries may still verify;
 * anything that changes the signed bytes, the timestamp or the signature must not.
 */
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createSignatureVerifier, signPayload, verifySignature, type SignatureCheck } from '../../shared/signature';

const SEED = 20_261_120;
const RUNS = 10_000;
const NOW = 1_790_000_000;
const TOLERANCE = 300;
const SECRETS = ['whsec_current_7Hq2', 'whsec_previous_Zr9x'] as const;
const UNCONFIGURED = 'whsec_unknown_Lp0c';
const REASONS = new Set(['missing_header', 'malformed_header', 'no_matching_signature', 'too_old', 'too_new']);

console.log(`signature fuzz: fast-check seed ${SEED}`);

const verifier = createSignatureVerifier({ secrets: SECRETS, toleranceSeconds: TOLERANCE });

function hmacHex(secret: string, t: number, body: Buffer): string {
  return createHmac('sha256', secret).update(`${t}.`).update(body).digest('hex');
}

/** `key=value` entries of a header, split on commas, whitespace around key and value dropped. */
function entries(header: string): [string, string][] {
  const out: [string, string][] = [];
  for (const raw of header.split(',')) {
    const eq = raw.indexOf('=');
    if (eq < 0) continue;
    out.push([raw.slice(0, eq).trim(), raw.slice(eq + 1).trim()]);
  }
  return out;
}

/** Independent check that `header` proves the body was signed at `timestamp` with a configured secret. */
function provesSignature(header: string, body: Buffer, timestamp: number, secrets: readonly string[]): boolean {
  const pairs = entries(header);
  const hasTimestamp = pairs.some(([k, v]) => k === 't' && /^\d+$/.test(v) && Number(v) === timestamp);
  const expected = new Set(secrets.map((s) => hmacHex(s, timestamp, body)));
  const hasSignature = pairs.some(([k, v]) => k === 'v1' && expected.has(v.toLowerCase()));
  return hasTimestamp && hasSignature;
}

/** The properties every answer must have, whatever the input. */
function expectSound(
  result: SignatureCheck,
  header: string | undefined,
  body: Buffer,
  secrets: readonly string[],
  now: number,
  tolerance: number,
): void {
  if (!result.ok) {
    expect(Object.keys(result).sort()).toEqual(['ok', 'reason']);
    expect(REASONS.has(result.reason)).toBe(true);
    return;
  }
  expect(Object.keys(result).sort()).toEqual(['ok', 'timestamp']);
  expect(header).toBeDefined();
  expect(Number.isSafeInteger(result.timestamp)).toBe(true);
  expect(Math.abs(now - result.timestamp)).toBeLessThanOrEqual(tolerance);
  expect(provesSignature(header!, body, result.timestamp, secrets)).toBe(true);
}

// ---------------------------------------------------------------------------------------------
// Arbitraries
// ---------------------------------------------------------------------------------------------

const hexChar = fc.constantFrom(...'0123456789abcdefABCDEF');
const hex = (length: number) => fc.string({ unit: hexChar, minLength: length, maxLength: length });
const odd = fc.constantFrom(
  '',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u00a0',
  '\u2003',
  '\ufeff',
  '\u200b',
  '\u0000',
  '=',
  ',',
  ';',
  '"',
  '\\',
  'é',
  '𝟙',
  '٣',
  '１',
  '🚀',
);

/** Header-ish strings: keys and values of the scheme and near misses, glued with odd separators. */
const structuredHeader = fc
  .array(
    fc.tuple(
      fc.constantFrom('t', 'v1', 'v0', 'v2', 'T', 'V1', ' t', 'v1 ', 't\u00a0', 'ｔ', 'v１', '', 'x', 'tt'),
      fc.constantFrom('=', '==', ':', '', ' = '),
      fc.oneof(
        fc.integer({ min: 0, max: 2 * NOW }).map(String),
        fc.constantFrom('', '-1', '1.5', '0x10', '1e9', '٣٣٣', '99999999999999999999', `${NOW}`, ` ${NOW} `, `0${NOW}`),
        hex(64),
        hex(63),
        hex(65),
        fc.string({ unit: 'binary', maxLength: 12 }),
      ),
      fc.oneof(fc.constant(','), fc.constant(', '), fc.constant(',,'), odd),
    ),
    { maxLength: 6 },
  )
  .map((parts) => parts.map(([k, eq, v, sep]) => `${k}${eq}${v}${sep}`).join(''));

const randomHeader = fc.oneof(
  { arbitrary: fc.constant(undefined), weight: 1 },
  { arbitrary: fc.string({ unit: 'binary', maxLength: 200 }), weight: 3 },
  { arbitrary: fc.string({ unit: 'grapheme', maxLength: 200 }), weight: 2 },
  { arbitrary: structuredHeader, weight: 6 },
  { arbitrary: fc.tuple(fc.integer({ min: NOW - 1000, max: NOW + 1000 }), hex(64)).map(([t, v]) => `t=${t},v1=${v}`), weight: 3 },
);

const realisticBody = fc
  .record({
    id: fc.uuid(),
    type: fc.constantFrom('run.completed', 'draft.ready', 'project.renamed'),
    project: fc.uuid(),
    answers: fc.nat(10_000),
    note: fc.string({ unit: 'grapheme', maxLength: 40 }),
  })
  .map((e) =>
    JSON.stringify({
      id: e.id,
      type: e.type,
      created_at: '2026-11-20T10:00:00Z',
      data: { project_id: e.project, run_id: 'r-1', status: 'completed', answers: e.answers, note: e.note },
    }),
  );

const body = fc.oneof(
  fc.uint8Array({ maxLength: 512 }).map((bytes) => Buffer.from(bytes)),
  realisticBody.map((text) => Buffer.from(text, 'utf8')),
  fc.string({ unit: 'binary', maxLength: 300 }).map((text) => Buffer.from(text, 'utf8')),
  fc.constant(Buffer.alloc(0)),
);

/** A mutation of a signed delivery; `apply` returns the new header and body. */
type Mutation =
  | { kind: 'flip_header_bit'; at: number; bit: number }
  | { kind: 'flip_body_bit'; at: number; bit: number }
  | { kind: 'truncate_header'; at: number }
  | { kind: 'truncate_body'; at: number }
  | { kind: 'append_body'; bytes: Uint8Array }
  | { kind: 'key_case'; key: 't' | 'v1'; replacement: string }
  | { kind: 'hex_case'; upper: boolean }
  | { kind: 'insert'; at: number; text: string }
  | { kind: 'extra_commas'; at: number; commas: string }
  | { kind: 'duplicate'; what: 'header' | 't' | 'v1' }
  | { kind: 'reorder' }
  | { kind: 'unknown_scheme'; scheme: string; value: string }
  | { kind: 'shift_timestamp'; delta: number }
  | { kind: 'leading_zeros'; zeros: number }
  | { kind: 'insert_body'; at: number; text: string }
  | { kind: 'resign'; secret: string; shift: number };

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.record({ kind: fc.constant('flip_header_bit' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 15 }) }),
  fc.record({ kind: fc.constant('flip_body_bit' as const), at: fc.nat(), bit: fc.integer({ min: 0, max: 7 }) }),
  fc.record({ kind: fc.constant('truncate_header' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('truncate_body' as const), at: fc.nat() }),
  fc.record({ kind: fc.constant('append_body' as const), bytes: fc.uint8Array({ minLength: 1, maxLength: 4 }) }),
  fc.record({
    kind: fc.constant('key_case' as const),
    key: fc.constantFrom('t' as const, 'v1' as const),
    replacement: fc.constantFrom('T', 'V1', 'v1 ', ' t', 'ｔ', 'v１', 'V', 't1'),
  }),
  fc.record({ kind: fc.constant('hex_case' as const), upper: fc.boolean() }),
  fc.record({
    kind: fc.constant('insert' as const),
    at: fc.nat(),
    text: fc.oneof(odd, fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 })),
  }),
  fc.record({ kind: fc.constant('extra_commas' as const), at: fc.nat(), commas: fc.constantFrom(',', ',,', ', ,', ' ,') }),
  fc.record({ kind: fc.constant('duplicate' as const), what: fc.constantFrom('header' as const, 't' as const, 'v1' as const) }),
  fc.record({ kind: fc.constant('reorder' as const) }),
  fc.record({ kind: fc.constant('unknown_scheme' as const), scheme: fc.constantFrom('v0', 'v2', 'v10', 'sha256'), value: hex(64) }),
  fc.record({ kind: fc.constant('shift_timestamp' as const), delta: fc.integer({ min: -400, max: 400 }).filter((d) => d !== 0) }),
  fc.record({ kind: fc.constant('leading_zeros' as const), zeros: fc.integer({ min: 1, max: 8 }) }),
  fc.record({ kind: fc.constant('insert_body' as const), at: fc.nat(), text: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 3 }) }),
  fc.record({
    kind: fc.constant('resign' as const),
    secret: fc.constantFrom(UNCONFIGURED, `${SECRETS[0]} `, SECRETS[0].toUpperCase(), ''),
    shift: fc.integer({ min: -2, max: 2 }),
  }),
);

function splice(text: string, at: number, insert: string, remove = 0): string {
  const i = text.length === 0 ? 0 : at % (text.length + 1);
  return text.slice(0, i) + insert + text.slice(i + remove);
}

function applyMutation(m: Mutation, header: string, raw: Buffer, t: number): { header: string; body: Buffer } {
  const body = Buffer.from(raw);
  switch (m.kind) {
    case 'flip_header_bit': {
      if (header.length === 0) return { header, body };
      const i = m.at % header.length;
      return { header: header.slice(0, i) + String.fromCharCode(header.charCodeAt(i) ^ (1 << m.bit)) + header.slice(i + 1), body };
    }
    case 'flip_body_bit':
      if (body.length > 0) body[m.at % body.length]! ^= 1 << m.bit;
      return { header, body };
    case 'truncate_header':
      return { header: header.slice(0, m.at % (header.length + 1)), body };
    case 'truncate_body':
      return { header, body: body.subarray(0, m.at % (body.length + 1)) };
    case 'append_body':
      return { header, body: Buffer.concat([body, Buffer.from(m.bytes)]) };
    case 'key_case':
      return { header: header.replace(m.key === 't' ? /(^|,)(\s*)t=/ : /(^|,)(\s*)v1=/, `$1$2${m.replacement}=`), body };
    case 'hex_case':
      return {
        header: header.replace(
          /v1=([0-9a-fA-F]+)/,
          (_all, hexValue: string) => `v1=${m.upper ? hexValue.toUpperCase() : hexValue.toLowerCase()}`,
        ),
        body,
      };
    case 'insert':
      return { header: splice(header, m.at, m.text), body };
    case 'extra_commas':
      return { header: splice(header, m.at, m.commas), body };
    case 'duplicate': {
      if (m.what === 'header') return { header: `${header},${header}`, body };
      const entry = header.split(',').find((e) => e.trim().startsWith(`${m.what}=`));
      return { header: entry === undefined ? header : `${header},${entry}`, body };
    }
    case 'reorder':
      return { header: header.split(',').reverse().join(','), body };
    case 'unknown_scheme':
      return { header: `${header},${m.scheme}=${m.value}`, body };
    case 'shift_timestamp':
      return { header: header.replace(/t=(\d+)/, (_all, digits: string) => `t=${Number(digits) + m.delta}`), body };
    case 'leading_zeros':
      return { header: header.replace(/t=(\d+)/, (_all, digits: string) => `t=${'0'.repeat(m.zeros)}${digits}`), body };
    case 'insert_body': {
      const text = body.toString('latin1');
      const i = text.length === 0 ? 0 : m.at % (text.length + 1);
      return { header, body: Buffer.concat([body.subarray(0, i), Buffer.from(m.text, 'utf8'), body.subarray(i)]) };
    }
    case 'resign':
      // A signature made with another (unconfigured, or near-miss) secret, possibly at another second.
      return { header: signPayload(m.secret, t + m.shift, body), body };
  }
}

// ---------------------------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------------------------

describe('signature verifier fuzz', () => {
  it(`never throws and never accepts ${RUNS} random or malformed headers and bodies`, () => {
    let checked = 0;
    fc.assert(
      fc.property(randomHeader, body, fc.integer({ min: NOW - 5000, max: NOW + 5000 }), (header, raw, now) => {
        const result = verifier(header, raw, now);
        checked += 1;
        expectSound(result, header, raw, SECRETS, now, TOLERANCE);
        // None of these was produced by signing: a match would be a forgery.
        expect(result.ok).toBe(false);
      }),
      { seed: SEED, numRuns: RUNS },
    );
    expect(checked).toBeGreaterThanOrEqual(RUNS);
  });

  it(`accepts a mutated delivery only when it still proves the exact body and time (${RUNS} runs)`, () => {
    let accepted = 0;
    let rejected = 0;
    fc.assert(
      fc.property(
        body,
        fc.constantFrom(...SECRETS),
        fc.integer({ min: -2 * TOLERANCE, max: 2 * TOLERANCE }),
        fc.array(mutation, { minLength: 0, maxLength: 3 }),
        (raw, secret, skew, mutations) => {
          const t = NOW + skew;
          let current: { header: string; body: Buffer } = { header: signPayload(secret, t, raw), body: raw };
          for (const m of mutations) current = applyMutation(m, current.header, current.body, t);
          const result = verifier(current.header, current.body, NOW);
          expectSound(result, current.header, current.body, SECRETS, NOW, TOLERANCE);
          if (result.ok) {
            accepted += 1;
            // Semantically identical: the same bytes and the same signed time.
            expect(current.body.equals(raw)).toBe(true);
            expect(result.timestamp).toBe(t);
          } else {
            rejected += 1;
          }
          if (mutations.length === 0) {
            // Unmutated: accepted inside the tolerance, refused as stale or early outside it.
            const inTolerance = Math.abs(skew) <= TOLERANCE;
            expect(result).toEqual(inTolerance ? { ok: true, timestamp: t } : { ok: false, reason: skew < 0 ? 'too_old' : 'too_new' });
          }
        },
      ),
      { seed: SEED + 1, numRuns: RUNS },
    );
    console.log(`signature fuzz: ${RUNS} mutated deliveries, ${accepted} still verified, ${rejected} refused`);
    // Both outcomes occur, so neither branch of the property is vacuous.
    expect(accepted).toBeGreaterThan(100);
    expect(rejected).toBeGreaterThan(100);
  });

  it('keeps the one-shot verifySignature sound for random secret lists and tolerances', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }), { minLength: 1, maxLength: 3 }),
        fc.string({ unit: 'grapheme', minLength: 1, maxLength: 24 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 3600 }),
        fc.integer({ min: -4000, max: 4000 }),
        body,
        (secrets, other, useConfigured, tolerance, skew, raw) => {
          const signer = useConfigured ? secrets[0]! : other;
          const header = signPayload(signer, NOW + skew, raw);
          const result = verifySignature({ header, rawBody: raw, secrets, nowSeconds: NOW, toleranceSeconds: tolerance });
          expectSound(result, header, raw, secrets, NOW, tolerance);
          if (useConfigured) {
            expect(result.ok).toBe(Math.abs(skew) <= tolerance);
          } else if (!secrets.includes(other)) {
            expect(result.ok).toBe(false);
          }
        },
      ),
      { seed: SEED + 2, numRuns: 2_000 },
    );
  });
});
