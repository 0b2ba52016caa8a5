/** Signed button values: what the bridge signs verifies, with any listed key; nothing else does. */
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { actionValueCodec, MAX_BUTTON_VALUE, parseActionSigningKeys } from '../../shared/buttons/value';

const KEY = 'k'.repeat(40);
const OLD_KEY = 'o'.repeat(40);
const target = { projectId: 'p1', projectName: 'Northwind Outdoor', channel: 'C123' };

describe('button values', () => {
  it('round-trips a target, signed with the newest key and verified with any listed one', () => {
    const oldValue = actionValueCodec([OLD_KEY]).encode(target);
    const rotated = actionValueCodec([KEY, OLD_KEY]);
    expect(rotated.decode(rotated.encode(target))).toEqual(target);
    expect(rotated.decode(oldValue)).toEqual(target);
    expect(actionValueCodec([KEY]).decode(oldValue)).toBeNull(); // the old key dropped
  });

  it.each([
    ['the old unsigned format', JSON.stringify({ p: 'p1', n: 'N', c: 'C123' })],
    ['not JSON', '{nope'],
    ['a number', 42],
    [
      'a signature of other fields',
      (() => {
        const value = JSON.parse(actionValueCodec([KEY]).encode(target)) as Record<string, string>;
        return JSON.stringify({ ...value, c: 'C999' });
      })(),
    ],
    [
      'a signature with characters added',
      (() => {
        const value = JSON.parse(actionValueCodec([KEY]).encode(target)) as Record<string, string>;
        return JSON.stringify({ ...value, s: `${value['s']}!!` });
      })(),
    ],
    [
      'a cut signature',
      (() => {
        const value = JSON.parse(actionValueCodec([KEY]).encode(target)) as Record<string, string>;
        return JSON.stringify({ ...value, s: value['s']!.slice(0, -1) });
      })(),
    ],
  ])('refuses %s', (_label, value) => {
    expect(actionValueCodec([KEY]).decode(value)).toBeNull();
  });

  it('signs other buttons’ fields the same way (Share in channel)', () => {
    const codec = actionValueCodec([KEY]);
    const value = codec.sign({ v: 'status', c: 'C1', p: 'p1' });
    expect(codec.verify(value)).toEqual({ v: 'status', c: 'C1', p: 'p1' });
    expect(codec.decode(value)).toBeNull(); // not a digest button's value, though signed with the same key
    expect(codec.verify(JSON.stringify({ ...(JSON.parse(value) as object), v: 'list' }))).toBeNull();
  });

  it('fits any name within Slack’s 2,000 characters and keeps project and channel exact', () => {
    const codec = actionValueCodec([KEY]);
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 100 }),
        fc.string({ maxLength: 6000, unit: 'binary' }),
        fc.stringMatching(/^[CG][A-Z0-9]{2,11}$/),
        (projectId, projectName, channel) => {
          const value = codec.encode({ projectId, projectName, channel });
          expect(value.length).toBeLessThanOrEqual(MAX_BUTTON_VALUE);
          expect(codec.decode(value)).toMatchObject({ projectId, channel });
        },
      ),
    );
  });

  it('reads one key or a JSON array of keys, refusing short or malformed ones without echoing them', () => {
    expect(parseActionSigningKeys(`  ${KEY}\n`, 'ACTION_SIGNING_KEY')).toEqual([KEY]);
    expect(parseActionSigningKeys(JSON.stringify([KEY, OLD_KEY]), 'ACTION_SIGNING_KEY')).toEqual([KEY, OLD_KEY]);
    for (const bad of ['short', '[]', '["short"]', '[nope', `${KEY} ${KEY}`, '[1]']) {
      expect(() => parseActionSigningKeys(bad, 'ACTION_SIGNING_KEY')).toThrow(/ACTION_SIGNING_KEY/);
      try {
        parseActionSigningKeys(bad, 'ACTION_SIGNING_KEY');
      } catch (error) {
        if (bad.length > 5) expect(String(error)).not.toContain(bad);
      }
    }
  });
});
