import type { KnownBlock } from '@slack/web-api';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ELLIPSIS,
  SLACK_LIMITS,
  assertWithinBlockKitLimits,
  escapeAndTruncate,
  escapeSlackText,
  findBlockKitViolations,
  findUnescapedMarkup,
  truncateText,
  unbreakableUnits,
} from '../../shared/slack-text';

const segmenter = new Intl.Segmenter('en', { granularity: 'grapheme' });
const graphemes = (s: string): string[] => [...segmenter.segment(s)].map((g) => g.segment);

/** Offsets at which `s` may be cut: grapheme boundaries that are not inside an escaped entity. */
function safeCuts(s: string): Set<number> {
  const cuts = new Set<number>([0]);
  let at = 0;
  for (const g of graphemes(s)) {
    at += g.length;
    cuts.add(at);
  }
  for (const m of s.matchAll(/&(?:amp|lt|gt);/g)) {
    for (let i = m.index + 1; i < m.index + m[0].length; i += 1) cuts.delete(i);
  }
  return cuts;
}

/** Asserts that `out` is `s` cut at a safe point (then trailing whitespace dropped) plus `suffix`, within `max`. */
function expectSafeTruncation(s: string, out: string, max: number, suffix = ELLIPSIS): void {
  expect(out.length).toBeLessThanOrEqual(Math.max(0, max));
  if (out === s) return;
  if (max <= suffix.length) return; // only (part of) the suffix is returned
  expect(out.endsWith(suffix)).toBe(true);
  const body = out.slice(0, out.length - suffix.length);
  expect(s.startsWith(body)).toBe(true);
  // body is the kept prefix with trailing whitespace dropped; the kept prefix ended at a safe cut.
  const cuts = safeCuts(s);
  let cutAtSafePoint = false;
  for (let end = body.length; end <= s.length && /^\s*$/.test(s.slice(body.length, end)); end += 1) {
    if (cuts.has(end)) {
      cutAtSafePoint = true;
      break;
    }
  }
  expect(cutAtSafePoint).toBe(true);
}

describe('escapeSlackText', () => {
  it('escapes the three control characters', () => {
    expect(escapeSlackText('a & b < c > d')).toBe('a &amp; b &lt; c &gt; d');
  });

  it('neutralises mentions, links and blockquotes', () => {
    expect(escapeSlackText('<!channel> <!here> <@U123> <#C1> <!subteam^S1>')).toBe(
      '&lt;!channel&gt; &lt;!here&gt; &lt;@U123&gt; &lt;#C1&gt; &lt;!subteam^S1&gt;',
    );
    expect(escapeSlackText('<https://evil.example|click>')).toBe('&lt;https://evil.example|click&gt;');
    expect(escapeSlackText('> quoted')).toBe('&gt; quoted');
  });

  it('escapes an existing entity again (the API sends text, not markup)', () => {
    expect(escapeSlackText('&amp; &lt;')).toBe('&amp;amp; &amp;lt;');
  });

  it('leaves other text alone', () => {
    const text = 'Café 日本語 👩‍💻 *bold* _it_ "quotes" \'apos\'';
    expect(escapeSlackText(text)).toBe(text);
  });
});

describe('truncateText', () => {
  it('returns text that fits unchanged', () => {
    expect(truncateText('hello', 5)).toBe('hello');
    expect(truncateText('', 0)).toBe('');
  });

  it("never cuts through a link or date the renderer wrote: keeps it whole or drops it, so no bare '<' is left", () => {
    const link = `<https://app.example.com/p/${'%60'.repeat(40)}/runs/r-2|gap 7>`;
    const date = '<!date^1794994200^{date_short_pretty}|Nov 20>';
    const text = `a ${link} b ${date} c`;
    for (let max = 1; max <= text.length; max++) {
      const cut = truncateText(text, max);
      expect(cut.length).toBeLessThanOrEqual(max);
      expect(findUnescapedMarkup(cut, { allowLinks: true })).toBeNull();
    }
    expect(truncateText(text, link.length)).toBe('a…');
    expect(truncateText(text, link.length + 4)).toBe(`a ${link}…`);
  });

  it('cuts ASCII and appends the suffix within the limit', () => {
    expect(truncateText('hello world', 8)).toBe('hello w…');
    expect(truncateText('hello world', 7)).toBe('hello…'); // trailing space dropped
    expect(truncateText('hello world', 8, ' [more]')).toBe('h [more]');
  });

  it('handles limits smaller than the suffix', () => {
    expect(truncateText('hello', 0)).toBe('');
    expect(truncateText('hello', -3)).toBe('');
    expect(truncateText('hello', 1)).toBe('…');
    expect(truncateText('hello world', 3, ' (cut)')).toBe(' (c');
  });

  it('counts UTF-16 code units like String.length', () => {
    const out = truncateText('𝒳𝒳𝒳𝒳', 5); // each 𝒳 is a surrogate pair
    expect(out).toBe('𝒳𝒳…');
    expect(out.length).toBe(5);
  });

  it('never splits a ZWJ emoji sequence', () => {
    const family = '👨‍👩‍👧‍👦'; // 11 code units
    expect(family.length).toBe(11);
    const s = `ab${family}${family}`;
    for (let max = 0; max <= s.length; max += 1) {
      const out = truncateText(s, max);
      expectSafeTruncation(s, out, max);
      expect(out).not.toMatch(/\u200D…$/);
    }
    expect(truncateText(s, 14)).toBe(`ab${family}…`);
    expect(truncateText(s, 13)).toBe('ab…');
  });

  it('never splits a skin-tone modifier from its emoji', () => {
    const s = '👍🏽👍🏽👍🏽';
    expect(truncateText(s, 6)).toBe('👍🏽…');
    expect(truncateText(s, 5)).toBe('👍🏽…');
    expect(truncateText(s, 4)).toBe('…');
  });

  it('never splits a flag into lone regional indicators', () => {
    const s = '🇫🇷🇩🇪🇯🇵';
    for (let max = 0; max <= s.length; max += 1) {
      const body = truncateText(s, max).replace(/…$/, '');
      expect(body.length % 4).toBe(0);
      expect(s.startsWith(body)).toBe(true);
    }
  });

  it('keeps combining marks with their base character', () => {
    const s = 'e\u0301e\u0301e\u0301'; // é as e + combining acute
    expect(truncateText(s, 4)).toBe('e\u0301…');
    expect(truncateText(s, 3)).toBe('e\u0301…');
    expect(truncateText(s, 2)).toBe('…');
  });

  it('cuts CJK text by character', () => {
    const s = '日本語のテキストはとても長い';
    expect(truncateText(s, 6)).toBe('日本語のテ…');
  });

  it('never cuts inside an escaped entity', () => {
    const escaped = escapeSlackText('a&b<c>d & e');
    expect(escaped).toBe('a&amp;b&lt;c&gt;d &amp; e');
    for (let max = 0; max <= escaped.length; max += 1) {
      const out = truncateText(escaped, max);
      expectSafeTruncation(escaped, out, max);
      expect(findUnescapedMarkup(out)).toBeNull();
    }
    expect(truncateText(escaped, 7)).toBe('a&amp;…');
    expect(truncateText(escaped, 6)).toBe('a…');
    expect(truncateText(escaped, 3)).toBe('a…');
    expect(escapeAndTruncate('Tom & Jerry', 10)).toBe('Tom &amp;…');
    expect(escapeAndTruncate('Tom & Jerry', 9)).toBe('Tom…');
  });

  it('treats an entity followed by a combining mark as one unit', () => {
    expect(unbreakableUnits('x&amp;\u0301y')).toEqual(['x', '&amp;\u0301', 'y']);
  });

  it('is safe and within the limit for arbitrary mixes of tricky text (property)', () => {
    const pieces = ['a', ' ', '日', '👨‍👩‍👧‍👦', '👍🏽', '🇫🇷', 'e\u0301', '𝒳', '&', '<', '>', '\n', '\u0600'];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), fc.integer({ min: 0, max: 120 }), (parts, max) => {
        const escaped = escapeSlackText(parts.join(''));
        const out = truncateText(escaped, max);
        expectSafeTruncation(escaped, out, max);
        expect(findUnescapedMarkup(out)).toBeNull();
        expect(out).not.toMatch(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/);
      }),
      { numRuns: 500 },
    );
  });
});

describe('findUnescapedMarkup', () => {
  it('accepts escaped text and rejects raw control characters', () => {
    expect(findUnescapedMarkup('a &amp; b &lt;!channel&gt;')).toBeNull();
    expect(findUnescapedMarkup('<!channel>')).toMatch(/unescaped "</);
    expect(findUnescapedMarkup('> quote')).toMatch(/unescaped ">"/);
    expect(findUnescapedMarkup('Tom & Jerry')).toMatch(/unescaped "&"/);
    expect(findUnescapedMarkup('&amp')).toMatch(/unescaped "&"/);
  });
});

describe('assertWithinBlockKitLimits', () => {
  const md = (text: string) => ({ type: 'mrkdwn' as const, text });
  const valid: { text: string; blocks: KnownBlock[] } = {
    text: 'Digest for Acme &amp; Co',
    blocks: [
      { type: 'header', text: { type: 'plain_text', text: 'Digest' } },
      { type: 'section', text: md('hello') },
      { type: 'section', fields: [md('a'), md('b')] },
      { type: 'divider' },
      { type: 'context', elements: [md('run 1')] },
    ],
  };
  const withBlocks = (blocks: KnownBlock[], text = 'fallback') => ({ text, blocks });
  const violationsOf = (message: { text: string; blocks: KnownBlock[] }) => findBlockKitViolations(message).join('\n');

  it('accepts a valid message', () => {
    expect(findBlockKitViolations(valid)).toEqual([]);
    expect(() => assertWithinBlockKitLimits(valid)).not.toThrow();
  });

  it('rejects a header over 150 chars or not plain_text', () => {
    expect(violationsOf(withBlocks([{ type: 'header', text: { type: 'plain_text', text: 'x'.repeat(151) } }]))).toMatch(/151 chars > 150/);
    expect(violationsOf(withBlocks([{ type: 'header', text: { type: 'plain_text', text: 'x'.repeat(150) } }]))).toBe('');
  });

  it('rejects section text over 3000 and empty text', () => {
    expect(violationsOf(withBlocks([{ type: 'section', text: md('x'.repeat(3001)) }]))).toMatch(/3001 chars > 3000/);
    expect(violationsOf(withBlocks([{ type: 'section', text: md(' ') }]))).toMatch(/empty text/);
    expect(violationsOf(withBlocks([{ type: 'section' }]))).toMatch(/needs text or fields/);
  });

  it('rejects more than 10 fields or a field over 2000', () => {
    expect(violationsOf(withBlocks([{ type: 'section', fields: Array.from({ length: 11 }, () => md('f')) }]))).toMatch(/11 fields > 10/);
    expect(violationsOf(withBlocks([{ type: 'section', fields: [md('x'.repeat(2001))] }]))).toMatch(/2001 chars > 2000/);
  });

  it('rejects more than 10 context elements', () => {
    expect(violationsOf(withBlocks([{ type: 'context', elements: Array.from({ length: 11 }, () => md('c')) }]))).toMatch(
      /11 elements > 10/,
    );
  });

  it('rejects more than 50 blocks', () => {
    const blocks: KnownBlock[] = Array.from({ length: 51 }, () => ({ type: 'divider' }));
    expect(violationsOf(withBlocks(blocks))).toMatch(/51 blocks > 50/);
  });

  it('rejects a message whose block text exceeds the total cap', () => {
    const blocks: KnownBlock[] = Array.from({ length: 4 }, () => ({ type: 'section', text: md('x'.repeat(2600)) }));
    expect(violationsOf(withBlocks(blocks))).toMatch(/10400 chars of block text > 10000/);
  });

  it('rejects an empty or over-long fallback text', () => {
    expect(violationsOf({ ...valid, text: '' })).toMatch(/empty fallback/);
    expect(violationsOf({ ...valid, text: 'x'.repeat(SLACK_LIMITS.fallbackText + 1) })).toMatch(/3001 chars > 3000/);
  });

  it('rejects unescaped markup anywhere, fallback included', () => {
    expect(violationsOf({ ...valid, text: 'hi <!channel>' })).toMatch(/text: unescaped "</);
    expect(violationsOf(withBlocks([{ type: 'section', text: md('<@U123>') }]))).toMatch(/unescaped "</);
    expect(violationsOf(withBlocks([{ type: 'section', fields: [md('A & B')] }]))).toMatch(/unescaped "&"/);
    expect(violationsOf(withBlocks([{ type: 'header', text: { type: 'plain_text', text: '<https://x|y>' } }]))).toMatch(/unescaped "</);
    expect(() => assertWithinBlockKitLimits(withBlocks([{ type: 'section', text: md('<!here>') }]))).toThrow(/Block Kit limits/);
  });

  it('rejects block types it does not check, and duplicate block ids', () => {
    expect(violationsOf(withBlocks([{ type: 'image', image_url: 'https://x', alt_text: 'x' }]))).toMatch(/not supported/);
    expect(
      violationsOf(
        withBlocks([
          { type: 'divider', block_id: 'a' },
          { type: 'divider', block_id: 'a' },
        ]),
      ),
    ).toMatch(/duplicate block_id/);
  });
});
