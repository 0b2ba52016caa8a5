/**
 * The Block Kit checker and truncation at their exact boundaries, with the exact problem each
 * violation reports: written against the mutants that survived test/unit/slack-text.test.ts (see
 * docs/TESTING.md), where a limit off by one or a check that never fires went unnoticed.
 */
import type { KnownBlock } from '@slack/web-api';
import { describe, expect, it } from 'vitest';
import {
  assertWithinBlockKitLimits,
  blocksTextLength,
  findBlockKitViolations,
  SLACK_LIMITS,
  truncateText,
  unbreakableUnits,
} from '../../shared/slack-text';

const plain = (text: string) => ({ type: 'plain_text' as const, text });
const mrkdwn = (text: string) => ({ type: 'mrkdwn' as const, text });
const section = (text: string, blockId?: string): KnownBlock => ({
  type: 'section',
  text: mrkdwn(text),
  ...(blockId === undefined ? {} : { block_id: blockId }),
});

function problemsOf(blocks: readonly unknown[], text = 'fallback'): string[] {
  return findBlockKitViolations({ text, blocks: blocks as KnownBlock[] });
}

describe('findBlockKitViolations at the limits', () => {
  it('accepts a fallback text of exactly the limit and rejects one more, or only whitespace', () => {
    expect(problemsOf([], 'x'.repeat(SLACK_LIMITS.fallbackText))).toEqual([]);
    expect(problemsOf([], 'x'.repeat(SLACK_LIMITS.fallbackText + 1))).toEqual([
      `text: ${SLACK_LIMITS.fallbackText + 1} chars > ${SLACK_LIMITS.fallbackText}`,
    ]);
    expect(problemsOf([], '   ')).toEqual(['text: empty fallback text']);
  });

  it('accepts exactly the maximum number of blocks', () => {
    const blocks = Array.from({ length: SLACK_LIMITS.blocksPerMessage }, () => ({ type: 'divider' }));
    expect(problemsOf(blocks)).toEqual([]);
    expect(problemsOf([...blocks, { type: 'divider' }])).toEqual([
      `blocks: ${SLACK_LIMITS.blocksPerMessage + 1} blocks > ${SLACK_LIMITS.blocksPerMessage}`,
    ]);
  });

  it('accepts unique block ids of 1 to 255 characters and names the block of a bad one', () => {
    expect(problemsOf([section('a', 'x'), section('b', 'y'.repeat(SLACK_LIMITS.blockId))])).toEqual([]);
    expect(problemsOf([section('a', '')])).toEqual(['blocks[0] (section): bad block_id length']);
    expect(problemsOf([section('a', 'ok'), section('b', 'z'.repeat(SLACK_LIMITS.blockId + 1))])).toEqual([
      'blocks[1] (section): bad block_id length',
    ]);
  });

  it('names the block and the field of a text object that is missing, of the wrong type or empty', () => {
    expect(problemsOf([{ type: 'header', text: null }])).toEqual(['blocks[0] (header).text: missing text object']);
    expect(problemsOf([{ type: 'header', text: { type: 'plain_text' } }])).toEqual(['blocks[0] (header).text: missing text object']);
    expect(problemsOf([{ type: 'header', text: { text: 'no type' } }])).toEqual(['blocks[0] (header).text: missing text object']);
    expect(problemsOf([{ type: 'header', text: mrkdwn('Title') }])).toEqual(['blocks[0] (header).text: text type "mrkdwn" not allowed']);
    expect(problemsOf([{ type: 'section', fields: [mrkdwn('ok'), mrkdwn(' ')] }])).toEqual(['blocks[0] (section).fields[1]: empty text']);
  });

  it('accepts exactly the maximum of fields, context elements and total block text', () => {
    const fields = Array.from({ length: SLACK_LIMITS.sectionFields }, (_, i) => plain(`f${i}`));
    const elements = Array.from({ length: SLACK_LIMITS.contextElements }, (_, i) => mrkdwn(`e${i}`));
    expect(
      problemsOf([
        { type: 'section', fields },
        { type: 'context', elements },
      ]),
    ).toEqual([]);
    const third = Math.floor(SLACK_LIMITS.messageTotalText / 4);
    const texts = [third, third, third, SLACK_LIMITS.messageTotalText - 3 * third].map((n) => section('x'.repeat(n)));
    expect(problemsOf(texts)).toEqual([]);
    expect(problemsOf([...texts, section('y')])).toEqual([
      `message: ${SLACK_LIMITS.messageTotalText + 1} chars of block text > ${SLACK_LIMITS.messageTotalText}`,
    ]);
  });

  it('accepts plain_text as well as mrkdwn in section text and fields, and checks every context element', () => {
    expect(problemsOf([{ type: 'section', text: plain('a'), fields: [plain('b'), mrkdwn('c')] }])).toEqual([]);
    expect(problemsOf([{ type: 'context', elements: [plain('p'), mrkdwn('m')] }])).toEqual([]);
    expect(problemsOf([{ type: 'section', text: mrkdwn('a<b') }])).toEqual(['blocks[0] (section).text: unescaped "<" at 1']);
    expect(problemsOf([{ type: 'context', elements: [mrkdwn('fine'), mrkdwn('x & y')] }])).toEqual([
      'blocks[0] (context).elements[1]: unescaped "&" at 2',
    ]);
    expect(problemsOf([{ type: 'context', elements: [{ type: 'image_text', text: 'z' }] }])).toEqual([
      'blocks[0] (context).elements[0]: text type "image_text" not allowed',
    ]);
  });

  it('lists every problem, one per line, when asked to assert the limits', () => {
    expect(() => assertWithinBlockKitLimits({ text: ' ', blocks: [{ type: 'context', elements: [] }] })).toThrow(
      'Slack message breaks Block Kit limits:\n- text: empty fallback text\n- blocks[0] (context): no elements',
    );
  });

  it('reports a section accessory and a context without elements', () => {
    expect(
      problemsOf([{ type: 'section', text: mrkdwn('a'), accessory: { type: 'image', image_url: 'https://x/y.png', alt_text: 'y' } }]),
    ).toEqual(['blocks[0] (section): accessories are not checked']);
    expect(problemsOf([{ type: 'context', elements: [] }])).toEqual(['blocks[0] (context): no elements']);
  });
});

describe('blocksTextLength', () => {
  it('adds the text of headers, section text and fields, and the text elements of a context', () => {
    const blocks = [
      { type: 'header', text: plain('12345') },
      { type: 'section', text: mrkdwn('123'), fields: [mrkdwn('12'), plain('1')] },
      { type: 'context', elements: [mrkdwn('1234'), { type: 'image', image_url: 'https://x/y.png', alt_text: 'not counted' }] },
      { type: 'divider' },
    ] as KnownBlock[];
    expect(blocksTextLength(blocks)).toBe(5 + 3 + 2 + 1 + 4);
    expect(blocksTextLength([{ type: 'section', fields: [mrkdwn('123')] }])).toBe(3);
  });
});

describe('truncateText at its edges', () => {
  it('gives an empty string for a limit of zero and the bare suffix when only the suffix fits', () => {
    expect(truncateText('abcdef', 0)).toBe('');
    expect(truncateText('abcdef', 1)).toBe('…');
    expect(truncateText('abcdef', 3, '...')).toBe('...');
  });

  it('cuts raw text with a bare ampersand (no entity) like any other character', () => {
    expect(truncateText('AT&T and more', 5)).toBe('AT&T…');
    expect(unbreakableUnits('a&b')).toEqual(['a', '&', 'b']);
  });
});
