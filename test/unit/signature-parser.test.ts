/**
 * The signature header parser's exact output, and the anchors of the fast path: written against the
 * mutants that survived test/unit/signature*.test.ts (see docs/TESTING.md).
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createSignatureVerifier, parseSignatureHeader } from '../../shared/signature';

const SECRET = 'whsec_parser';
const NOW = 1_790_000_000;
const BODY = Buffer.from('{"id":"e1"}');
const hex = (t: number): string => createHmac('sha256', SECRET).update(`${t}.`).update(BODY).digest('hex');
const verify = createSignatureVerifier({ secrets: [SECRET] });

describe('parseSignatureHeader', () => {
  it('trims spaces around items, keys and values', () => {
    expect(parseSignatureHeader(` t = ${NOW} ,  v1 = ${hex(NOW)} `)).toEqual([
      { timestamp: NOW, signatures: [Buffer.from(hex(NOW), 'hex')] },
    ]);
  });

  it('pairs a v1 that comes before its t with that t', () => {
    expect(parseSignatureHeader(`v1=${hex(NOW)},t=${NOW}`)).toEqual([{ timestamp: NOW, signatures: [Buffer.from(hex(NOW), 'hex')] }]);
  });

  it('starts a new group at each further t', () => {
    expect(parseSignatureHeader(`t=1,t=${NOW},v1=${hex(NOW)}`)).toEqual([
      { timestamp: 1, signatures: [] },
      { timestamp: NOW, signatures: [Buffer.from(hex(NOW), 'hex')] },
    ]);
  });

  it('rejects a t that is signed, too long or not all digits', () => {
    for (const t of ['-12', '1234567890123456', '12a', 'a12']) expect(parseSignatureHeader(`t=${t},v1=${hex(NOW)}`)).toBeNull();
  });
});

describe('the verifier on headers near the canonical form', () => {
  it('verifies a header with spaces after the comma (general parser) as the canonical one', () => {
    expect(verify(`t=${NOW}, v1=${hex(NOW)}`, BODY, NOW)).toEqual({ ok: true, timestamp: NOW });
  });

  it('does not take text before t= or after the signature as the canonical form', () => {
    expect(verify(`xt=${NOW},v1=${hex(NOW)}`, BODY, NOW)).toEqual({ ok: false, reason: 'malformed_header' });
    expect(verify(`t=${NOW},v1=${hex(NOW)}00`, BODY, NOW)).toEqual({ ok: false, reason: 'no_matching_signature' });
  });
});

describe('the canonical form decoded by char code', () => {
  const bodies = Array.from({ length: 20 }, (_, i) => Buffer.from(`{"id":"e${i}"}`));
  const sign = (body: Buffer): string => createHmac('sha256', SECRET).update(`${NOW}.`).update(body).digest('hex');

  it('decodes every hex digit in lower and upper case', () => {
    const digits = new Set(bodies.flatMap((body) => [...sign(body)]));
    expect(digits.size).toBe(16);
    for (const body of bodies) {
      expect(verify(`t=${NOW},v1=${sign(body)}`, body, NOW)).toEqual({ ok: true, timestamp: NOW });
      expect(verify(`t=${NOW},v1=${sign(body).toUpperCase()}`, body, NOW)).toEqual({ ok: true, timestamp: NOW });
    }
  });

  it('rejects a signature with any one digit changed', () => {
    const signature = sign(BODY);
    for (let i = 0; i < signature.length; i++) {
      const changed = `${signature.slice(0, i)}${signature[i] === '0' ? '1' : '0'}${signature.slice(i + 1)}`;
      expect(verify(`t=${NOW},v1=${changed}`, BODY, NOW)).toEqual({ ok: false, reason: 'no_matching_signature' });
    }
  });

  it('does not read a character outside 0-9, a-f, A-F as a hex digit', () => {
    // Each stranger stands where a sloppy decoder would read it as the digit it replaces: its low
    // byte (U+0161 → 0x61 'a'), or one past a range (':' - 48 = 10 = 'a', '`' - 87 = '@' - 55 = 9).
    const strangers: [digit: string, stranger: string][] = [
      ['a', '\u0161'],
      ['a', ':'],
      ['9', '`'],
      ['9', '@'],
    ];
    for (const [digit, stranger] of strangers) {
      const body = bodies.find((candidate) => sign(candidate).includes(digit))!;
      const signature = sign(body);
      const at = signature.indexOf(digit);
      const header = `t=${NOW},v1=${signature.slice(0, at)}${stranger}${signature.slice(at + 1)}`;
      expect(verify(header, body, NOW)).toEqual({ ok: false, reason: 'no_matching_signature' });
    }
  });
});
