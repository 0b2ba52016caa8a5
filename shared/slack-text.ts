/**
 * Slack text safety and Block Kit limits, pure (no I/O).
 *
 * - `escapeSlackText` neutralises Slack's three control characters so API-sourced text can never
 *   form a mention (`<!channel>`, `<@U123>`), a link (`<https://x|y>`) or a blockquote (`> …`).
 * - `truncateText` shortens text without cutting a grapheme cluster or an escaped entity.
 * - `SLACK_LIMITS` and `findBlockKitViolations` / `assertWithinBlockKitLimits` describe and check the
 *   limits of a message built from header, section, context and divider blocks.
 *
 * Lengths are counted in UTF-16 code units (`String.length`), which is how Slack counts its
 * "characters" limits. Limits are checked on the escaped text (an `&amp;` counts as 5), which is never
 * shorter than what Slack displays, so the check is conservative.
 */
import type { KnownBlock } from '@slack/web-api';
import { nativeBlockProblems } from './slack-blocks/check';
import type { DataVisualizationBlock } from './slack-blocks/types';

/** Block Kit limits the digest respects (UTF-16 code units; see module doc). */
export const SLACK_LIMITS = {
  /** `header` block: plain_text, 1..150. */
  headerText: 150,
  /** `section` block `text`: 1..3000. */
  sectionText: 3000,
  /** `section` block `fields`: at most 10 items… */
  sectionFields: 10,
  /** …each 1..2000. */
  sectionFieldText: 2000,
  /** `context` block: at most 10 elements. */
  contextElements: 10,
  /** Any text object: 1..3000. */
  textObject: 3000,
  /** Blocks in one message. */
  blocksPerMessage: 50,
  /**
   * Sum of the text of all blocks of one message. Slack's real limits are larger (and not all
   * documented); the bridge keeps every message under this conservative cap.
   */
  messageTotalText: 10_000,
  /** Top-level fallback `text` (notifications, screen readers). Slack truncates past 40,000; we keep it short. */
  fallbackText: 3000,
  /** `block_id`, when set. */
  blockId: 255,
  /** `actions` block: at most 25 elements. */
  actionsElements: 25,
  /** Button text (plain_text). */
  buttonText: 75,
  /** Button `url`. */
  /** An action button's value (Block Kit: 2,000 characters). */
  buttonValue: 2000,
  buttonUrl: 3000,
  /** `action_id`. */
  actionId: 255,
} as const;

/** Suffix used when a text is cut. */
export const ELLIPSIS = '…';

/**
 * Escapes Slack's control characters: `&` → `&amp;`, `<` → `&lt;`, `>` → `&gt;` (in that order, so an
 * entity is never double-escaped by mistake). Apply to every API-sourced string before it is placed in
 * a text object or in the fallback `text`. Slack decodes exactly these three entities for display.
 */
export function escapeSlackText(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

// ---------------------------------------------------------------------------------------------
// Service text: nothing hidden, nothing restyled

/**
 * Zero-width characters (U+200B–U+200F, U+2060, U+FEFF) and bidirectional controls (U+202A–U+202E,
 * U+2066–U+2069): they could hide text, or make text read in another order than it is sent.
 */
const INVISIBLE_OR_BIDI = /[\u200B-\u200F\u2060\uFEFF\u202A-\u202E\u2066-\u2069]/g;

/** Characters that render as nothing visible on their own (beyond whitespace): Hangul fillers, braille blank. */
const BLANK_LOOKING = /[\s\u115F\u1160\u3164\uFFA0\u2800\u00AD\u180E]|\u034F/g;

/** Removes zero-width and direction-changing characters (see `INVISIBLE_OR_BIDI`). */
export function stripInvisible(s: string): string {
  return s.replace(INVISIBLE_OR_BIDI, '');
}

/** True when `s` shows nothing once invisible, bidi, blank-looking and whitespace characters are gone. */
export function isVisuallyEmpty(s: string): boolean {
  return stripInvisible(s).replace(BLANK_LOOKING, '').length === 0;
}

/**
 * Slack mrkdwn has no escape for its style markers (`*bold*`, `_italic_`, `~strike~`, `` `code` ``): a
 * backslash is shown as is, and a zero-width character next to a marker is unreliable (and removed by
 * `stripInvisible` anyway). So each marker in service text is replaced by a look-alike that Slack does
 * not parse: `*` → `∗` (U+2217), `_` → `ˍ` (U+02CD), `~` → `∼` (U+223C), `` ` `` → `ˋ` (U+02CB).
 * The text reads the same and can never open or close a style that spans the renderer's own text.
 */
export const FORMATTING_LOOKALIKES: Readonly<Record<string, string>> = { '*': '\u2217', _: '\u02CD', '~': '\u223C', '`': '\u02CB' };

/** Replaces Slack's style markers with look-alikes (see `FORMATTING_LOOKALIKES`). */
export function neutraliseFormatting(s: string): string {
  return s.replace(/[*_~`]/g, (marker) => FORMATTING_LOOKALIKES[marker] ?? marker);
}

/**
 * Service text made safe for one mrkdwn line: invisible and bidi characters removed, whitespace runs
 * collapsed, style markers neutralised, `&`, `<`, `>` escaped, cut to `maxChars` (escaped length).
 */
export function serviceText(s: string, maxChars: number): string {
  const plain = neutraliseFormatting(stripInvisible(s).replace(/\s+/g, ' ').trim());
  return escapeAndTruncate(plain, maxChars);
}

/**
 * Service text for a literal text element (a data table's `raw_text` or `rich_text` text, which Slack
 * shows as is, parsing neither mrkdwn nor `<…>`): invisible and bidi characters removed, whitespace runs
 * collapsed, cut to `maxChars`. Nothing to escape: a mention or link there is only its characters.
 */
export function plainServiceText(s: string, maxChars: number): string {
  return truncateText(stripInvisible(s).replace(/\s+/g, ' ').trim(), maxChars);
}

/** How much of a user's input a reply quotes back (a usage error names the word it could not read). */
export const ECHO_CHARS = 40;

/**
 * Text a user typed, quoted back in a reply ("`<!channel>` is not a duration"): sanitized like service
 * text (no mention, link, bidi control or style marker survives) and cut.
 */
export function quotedInput(text: string, maxChars: number = ECHO_CHARS): string {
  return `"${serviceText(text, maxChars)}"`;
}

/** `serviceText` of a name, or of `id` when the name shows nothing (e.g. only zero-width characters). */
export function serviceName(name: string | null | undefined, id: string, maxChars: number): string {
  if (name !== null && name !== undefined && !isVisuallyEmpty(name)) return serviceText(name, maxChars);
  return serviceText(id, maxChars);
}

/** The entities `escapeSlackText` produces; truncation treats each as one indivisible unit. */
const ENTITIES = ['&amp;', '&lt;', '&gt;'] as const;

// Created on first use: ICU start-up costs ~20 ms, which would otherwise land in every cold start.
let graphemeSegmenter: Intl.Segmenter | undefined;

/**
 * Splits text into units that must never be cut: extended grapheme clusters (ZWJ emoji sequences,
 * skin-tone modifiers, regional-indicator flags, surrogate pairs, base + combining marks), with any
 * escaped entity (`&amp;`, `&lt;`, `&gt;`) merged into a single unit together with whatever grapheme
 * the entity ends inside (e.g. a combining mark after the `;`).
 */
export function unbreakableUnits(s: string): string[] {
  return [...iterateUnits(s)];
}

function* iterateUnits(s: string): Generator<string> {
  let unitStart = 0;
  let mustReach = 0; // end index of the furthest entity begun in the current unit
  for (const { segment, index } of (graphemeSegmenter ??= new Intl.Segmenter('en', { granularity: 'grapheme' })).segment(s)) {
    const end = index + segment.length;
    if (segment === '<') mustReach = Math.max(mustReach, renderedMarkupEnd(s, index));
    for (let at = s.indexOf('&', index); at !== -1 && at < end; at = s.indexOf('&', at + 1)) {
      const entity = ENTITIES.find((e) => s.startsWith(e, at));
      if (entity !== undefined) mustReach = Math.max(mustReach, at + entity.length);
    }
    if (end >= mustReach) {
      yield s.slice(unitStart, end);
      unitStart = end;
    }
  }
  if (unitStart < s.length) yield s.slice(unitStart);
}

/** Where a link or date the renderer wrote (`<https://…|label>`, `<!date^…|…>`) starting at `at` ends; `at` if none does. */
function renderedMarkupEnd(s: string, at: number): number {
  for (const markup of RENDERED_MARKUP_AT) {
    markup.lastIndex = at;
    if (markup.test(s)) return markup.lastIndex;
  }
  return at;
}

/**
 * Shortens `s` to at most `maxChars` UTF-16 code units, `suffix` included, cutting only between
 * grapheme clusters and never inside an escaped entity or a link or date the renderer wrote (see `unbreakableUnits`). Trailing whitespace
 * before the suffix is dropped. Text that already fits is returned unchanged. If even the suffix does
 * not fit, the suffix itself is shortened (grapheme-safe) and returned; `maxChars <= 0` gives `''`.
 *
 * To shorten API text, escape first and truncate the escaped text (`escapeAndTruncate`), so the limit
 * holds for what is actually sent.
 */
export function truncateText(s: string, maxChars: number, suffix: string = ELLIPSIS): string {
  if (s.length <= maxChars) return s;
  if (maxChars <= 0) return '';
  if (suffix.length >= maxChars) return suffix.length === maxChars ? suffix : truncateText(suffix, maxChars, '');
  const room = maxChars - suffix.length;
  let kept = '';
  for (const unit of iterateUnits(s)) {
    if (kept.length + unit.length > room) break;
    kept += unit;
  }
  return kept.trimEnd() + suffix;
}

/** Escapes API text and shortens it to `maxChars` (escaped length), grapheme- and entity-safe. */
export function escapeAndTruncate(s: string, maxChars: number, suffix: string = ELLIPSIS): string {
  return truncateText(escapeSlackText(s), maxChars, suffix);
}

// ---------------------------------------------------------------------------------------------
// Validation

/** What `findBlockKitViolations` accepts: the fields of a chat.postMessage call that it checks. */
export interface CheckableMessage {
  text: string;
  blocks: readonly (KnownBlock | DataVisualizationBlock)[];
}

/**
 * Finds characters that only appear when text was not escaped: `<` or `>` anywhere, or an `&` that does
 * not start `&amp;`, `&lt;` or `&gt;`. The digest renderer never emits Slack markup that needs `<…>`
 * (links, mentions, dates), so any such character means API text slipped through unescaped.
 */
export function findUnescapedMarkup(text: string, options: { allowLinks?: boolean } = {}): string | null {
  if (options.allowLinks === true) text = text.replace(RENDERED_LINK, 'link').replace(RENDERED_DATE, 'date');
  const angle = /[<>]/.exec(text);
  if (angle) return `unescaped "${angle[0]}" at ${angle.index}`;
  const amp = /&(?!amp;|lt;|gt;)/.exec(text);
  if (amp) return `unescaped "&" at ${amp.index}`;
  return null;
}

/** A link the renderer itself writes (`<https://…|label>`): https only, no whitespace or markup in the URL. */
const RENDERED_LINK = /<https:\/\/[^\s<>|]+\|[^<>|]+>/g;
/** A date token the renderer itself writes (`<!date^1794994200^{date_short_pretty} {time}|fallback>`). */
const RENDERED_DATE = /<!date\^\d+\^(?:\{[a-z_]+\} ?)+\|[^<>|]+>/g;
/** The same, anchored where a cut would fall: a truncation keeps each whole or drops it, never leaves a bare `<`. */
const RENDERED_MARKUP_AT = [RENDERED_LINK, RENDERED_DATE].map((markup) => new RegExp(markup.source, 'y'));

interface TextLike {
  type: string;
  text: string;
}

function isTextLike(value: unknown): value is TextLike {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Record<string, unknown>;
  return typeof record['type'] === 'string' && typeof record['text'] === 'string';
}

/**
 * Lists every way `message` breaks a limit in `SLACK_LIMITS`, or carries unescaped markup (see
 * `findUnescapedMarkup`). Supports the block types the bridge renders (header, section, context,
 * divider); any other type is reported, since its limits are not checked here. Empty list = valid.
 */
export function findBlockKitViolations(message: CheckableMessage): string[] {
  const problems: string[] = [];
  let total = 0;

  const checkText = (where: string, obj: unknown, max: number, allowedTypes: readonly string[]): void => {
    if (!isTextLike(obj)) {
      problems.push(`${where}: missing text object`);
      return;
    }
    if (!allowedTypes.includes(obj.type)) problems.push(`${where}: text type "${obj.type}" not allowed`);
    if (obj.text.trim().length === 0) problems.push(`${where}: empty text`);
    if (obj.text.length > max) problems.push(`${where}: ${obj.text.length} chars > ${max}`);
    const markup = findUnescapedMarkup(obj.text, { allowLinks: obj.type === 'mrkdwn' });
    if (markup !== null) problems.push(`${where}: ${markup}`);
    total += obj.text.length;
  };

  if (message.text.trim().length === 0) problems.push('text: empty fallback text');
  if (message.text.length > SLACK_LIMITS.fallbackText) {
    problems.push(`text: ${message.text.length} chars > ${SLACK_LIMITS.fallbackText}`);
  }
  const fallbackMarkup = findUnescapedMarkup(message.text);
  if (fallbackMarkup !== null) problems.push(`text: ${fallbackMarkup}`);

  if (message.blocks.length > SLACK_LIMITS.blocksPerMessage) {
    problems.push(`blocks: ${message.blocks.length} blocks > ${SLACK_LIMITS.blocksPerMessage}`);
  }

  const blockIds = new Set<string>();
  message.blocks.forEach((block, i) => {
    const where = `blocks[${i}] (${block.type})`;
    if (block.block_id !== undefined) {
      if (block.block_id.length === 0 || block.block_id.length > SLACK_LIMITS.blockId) problems.push(`${where}: bad block_id length`);
      if (blockIds.has(block.block_id)) problems.push(`${where}: duplicate block_id "${block.block_id}"`);
      blockIds.add(block.block_id);
    }
    switch (block.type) {
      case 'header':
        checkText(`${where}.text`, block.text, SLACK_LIMITS.headerText, ['plain_text']);
        break;
      case 'section': {
        const fields = block.fields ?? [];
        if (block.text === undefined && fields.length === 0) problems.push(`${where}: needs text or fields`);
        if (block.text !== undefined) checkText(`${where}.text`, block.text, SLACK_LIMITS.sectionText, ['plain_text', 'mrkdwn']);
        if (fields.length > SLACK_LIMITS.sectionFields) problems.push(`${where}: ${fields.length} fields > ${SLACK_LIMITS.sectionFields}`);
        fields.forEach((field, j) => checkText(`${where}.fields[${j}]`, field, SLACK_LIMITS.sectionFieldText, ['plain_text', 'mrkdwn']));
        if (block.accessory !== undefined) problems.push(`${where}: accessories are not checked`);
        break;
      }
      case 'context':
        if (block.elements.length === 0) problems.push(`${where}: no elements`);
        if (block.elements.length > SLACK_LIMITS.contextElements) {
          problems.push(`${where}: ${block.elements.length} elements > ${SLACK_LIMITS.contextElements}`);
        }
        block.elements.forEach((element, j) =>
          checkText(`${where}.elements[${j}]`, element, SLACK_LIMITS.textObject, ['plain_text', 'mrkdwn']),
        );
        break;
      case 'divider':
        break;
      // Checked as a whole message below (per-message bounds too): shared/slack-blocks/check.ts.
      case 'data_visualization':
      case 'data_table':
        break;
      case 'actions':
        if (block.elements.length === 0 || block.elements.length > SLACK_LIMITS.actionsElements)
          problems.push(`${where}: ${block.elements.length} elements`);
        block.elements.forEach((element, j) => problems.push(...buttonViolations(`${where}.elements[${j}]`, element)));
        break;
      default:
        problems.push(`${where}: block type not supported by this check`);
    }
  });

  problems.push(...nativeBlockProblems(message.blocks));
  if (total > SLACK_LIMITS.messageTotalText) problems.push(`message: ${total} chars of block text > ${SLACK_LIMITS.messageTotalText}`);
  return problems;
}

/** Problems of one `actions` element; only link buttons (https `url`) are rendered by the bridge. */
function buttonViolations(where: string, element: unknown): string[] {
  const record = (typeof element === 'object' && element !== null ? element : {}) as Record<string, unknown>;
  if (record['type'] !== 'button') return [`${where}: only buttons are checked`];
  const problems: string[] = [];
  const text = record['text'];
  if (!isTextLike(text) || text.type !== 'plain_text' || text.text.trim().length === 0 || text.text.length > SLACK_LIMITS.buttonText) {
    problems.push(`${where}: button text must be plain_text of 1..${SLACK_LIMITS.buttonText} chars`);
  }
  // A link button carries a url; an action button (handled by /slack/interactions) a value instead.
  const url = record['url'];
  const value = record['value'];
  if (url === undefined && typeof value === 'string') {
    if (value.length === 0 || value.length > SLACK_LIMITS.buttonValue)
      problems.push(`${where}: button value must be 1..${SLACK_LIMITS.buttonValue} chars`);
  } else if (typeof url !== 'string' || !url.startsWith('https://') || url.length > SLACK_LIMITS.buttonUrl) {
    problems.push(`${where}: button url must be https and ≤ ${SLACK_LIMITS.buttonUrl} chars`);
  }
  const actionId = record['action_id'];
  if (actionId !== undefined && (typeof actionId !== 'string' || actionId.length === 0 || actionId.length > SLACK_LIMITS.actionId))
    problems.push(`${where}: bad action_id`);
  return problems;
}

/** Throws an Error listing every violation found by `findBlockKitViolations`. */
export function assertWithinBlockKitLimits(message: CheckableMessage): void {
  const problems = findBlockKitViolations(message);
  if (problems.length > 0) throw new Error(`Slack message breaks Block Kit limits:\n- ${problems.join('\n- ')}`);
}

/** Total text length of a message's blocks, as `findBlockKitViolations` counts it. */
export function blocksTextLength(blocks: readonly KnownBlock[]): number {
  let total = 0;
  for (const block of blocks) {
    switch (block.type) {
      case 'header':
        total += block.text.text.length;
        break;
      case 'section':
        total += block.text?.text.length ?? 0;
        for (const field of block.fields ?? []) total += field.text.length;
        break;
      case 'context':
        for (const element of block.elements) if (isTextLike(element)) total += element.text.length;
        break;
      default:
        break;
    }
  }
  return total;
}
