/** Slack messages as plain terminal text: `npm start`'s console, `bridge slack` and test transcripts. */
import { asArray as listOf, isRecord } from '../../shared/util';
import { normalizeChannel } from './store';

export interface RenderableMessage {
  channel?: string | undefined;
  ts?: string | undefined;
  thread_ts?: string | undefined;
  text?: string | undefined;
  blocks?: unknown[] | undefined;
}

const DIVIDER = '─'.repeat(40);
const REPLY_FIRST = '  ↳ ';
const REPLY_REST = '    ';

/**
 * Renders a Slack message as plain readable text. A top-level message starts with a `#channel  ts`
 * line (when the channel is known); a thread reply is indented with `  ↳ ` instead.
 */
export function renderMessageAsText(message: RenderableMessage): string {
  const body = renderBody(message);
  const isReply = message.thread_ts !== undefined && message.thread_ts !== message.ts;
  if (isReply) {
    return body.map((line, i) => `${i === 0 ? REPLY_FIRST : REPLY_REST}${line}`.trimEnd()).join('\n');
  }
  const heading = message.channel !== undefined ? [`#${normalizeChannel(message.channel)}${message.ts ? `  ${message.ts}` : ''}`] : [];
  return [...heading, ...body].join('\n');
}

/** Renders messages in conversation order: each top-level message followed by its replies. */
export function renderConversation(messages: RenderableMessage[]): string {
  const isReply = (m: RenderableMessage): boolean => m.thread_ts !== undefined && m.thread_ts !== m.ts;
  const parents = messages.filter((m) => !isReply(m));
  const parentTs = new Set(parents.map((m) => m.ts));
  const out: string[] = [];
  for (const parent of parents) {
    out.push(renderMessageAsText(parent));
    for (const reply of messages.filter((m) => isReply(m) && m.thread_ts === parent.ts)) out.push(renderMessageAsText(reply));
  }
  for (const orphan of messages.filter((m) => isReply(m) && !parentTs.has(m.thread_ts))) out.push(renderMessageAsText(orphan));
  return out.join('\n');
}

function renderBody(message: RenderableMessage): string[] {
  const blocks = message.blocks ?? [];
  const lines = blocks.flatMap(renderBlock);
  if (lines.length === 0) return mrkdwnToPlain(message.text ?? '').split('\n');
  return lines;
}

/** Each block type as lines of text; any other shows as `[type block]`. */
const BLOCK_TEXT: Readonly<Record<string, (block: Record<string, unknown>) => string[]>> = {
  header: (block) => [`# ${textOf(block.text)}`],
  section: renderSection,
  context: (block) => {
    const parts = renderElements(block.elements);
    return parts.length > 0 ? [`  ${parts.join(' · ')}`] : [];
  },
  divider: () => [DIVIDER],
  rich_text: (block) => listOf(block.elements).flatMap(renderRichTextElement),
  markdown: (block) => (typeof block.text === 'string' ? block.text.split('\n') : []),
  image: (block) => [renderElement(block)],
  actions: (block) => {
    const parts = renderElements(block.elements);
    return parts.length > 0 ? [parts.join(' ')] : [];
  },
  data_visualization: renderChart,
  data_table: renderTable,
};

function renderBlock(block: unknown): string[] {
  if (!isRecord(block)) return [];
  const type = typeof block.type === 'string' ? block.type : 'unknown';
  return Object.hasOwn(BLOCK_TEXT, type) ? BLOCK_TEXT[type]!(block) : [`[${type} block]`];
}

function renderSection(block: Record<string, unknown>): string[] {
  const lines: string[] = [];
  const text = textOf(block.text);
  if (text) lines.push(...text.split('\n'));
  for (const field of listOf(block.fields)) {
    const value = textOf(field)
      .split('\n')
      .map((s) => s.trim())
      .filter((s) => s !== '')
      .join(' ');
    if (value) lines.push(`  • ${value}`);
  }
  const accessory = renderElement(block.accessory);
  if (accessory) lines.push(`  ${accessory}`);
  return lines;
}

/** A chart as its title and one line per series (pie: per segment), each value in category order. */
function renderChart(block: Record<string, unknown>): string[] {
  const chart = isRecord(block.chart) ? block.chart : {};
  const point = (p: unknown): string => (isRecord(p) ? `${String(p.label)} ${String(p.value)}` : '');
  const lines =
    chart.type === 'pie'
      ? listOf(chart.segments).map((segment) => `  • ${point(segment)}`)
      : listOf(chart.series).map((s) => (isRecord(s) ? `  • ${String(s.name)}: ${listOf(s.data).map(point).join(', ')}` : ''));
  return [`📈 ${String(block.title)} (${String(chart.type)} chart)`, ...lines];
}

/** A data table as its caption and one ` | `-separated line per row, the header first. */
function renderTable(block: Record<string, unknown>): string[] {
  const cell = (c: unknown): string => {
    if (!isRecord(c)) return '';
    if (c.type === 'rich_text') return listOf(c.elements).flatMap(renderRichTextElement).join(' ');
    return typeof c.text === 'string' ? c.text : String(c.value);
  };
  const rows = listOf(block.rows).map((row) => `  ${listOf(row).map(cell).join(' | ')}`);
  return [`▦ ${typeof block.caption === 'string' ? block.caption : 'table'}`, ...rows];
}

/** A text object (`plain_text` / `mrkdwn`) as plain text. */
function textOf(value: unknown): string {
  if (typeof value === 'string') return mrkdwnToPlain(value);
  if (!isRecord(value) || typeof value.text !== 'string') return '';
  return value.type === 'mrkdwn' ? mrkdwnToPlain(value.text) : value.text;
}

function renderElements(elements: unknown): string[] {
  return listOf(elements)
    .map(renderElement)
    .filter((s) => s !== '');
}

function renderElement(element: unknown): string {
  if (!isRecord(element)) return '';
  switch (element.type) {
    case 'mrkdwn':
    case 'plain_text':
      return textOf(element);
    case 'image':
      return `[image: ${typeof element.alt_text === 'string' ? element.alt_text : ''}]`;
    case 'button': {
      const label = `[${textOf(element.text)}]`;
      return typeof element.url === 'string' ? `${label} ${element.url}` : label;
    }
    default:
      return '';
  }
}

function renderRichTextElement(element: unknown): string[] {
  if (!isRecord(element)) return [];
  const children = listOf(element.elements);
  switch (element.type) {
    case 'rich_text_section':
      return renderInline(children).split('\n');
    case 'rich_text_list': {
      const indent = '  '.repeat(typeof element.indent === 'number' ? element.indent : 0);
      const ordered = element.style === 'ordered';
      const offset = typeof element.offset === 'number' ? element.offset : 0;
      return children.map((item, i) => {
        const inline = isRecord(item) ? renderInline(listOf(item.elements)) : '';
        return `${indent}${ordered ? `${offset + i + 1}.` : '•'} ${inline.replace(/\n/g, ' ')}`;
      });
    }
    case 'rich_text_quote':
      return renderInline(children)
        .split('\n')
        .map((line) => `> ${line}`);
    case 'rich_text_preformatted':
      return ['```', ...renderInline(children).split('\n'), '```'];
    default:
      return [];
  }
}

/** Each rich text inline element as text; any other type shows nothing. */
const INLINE_TEXT: Readonly<Record<string, (el: Record<string, unknown>) => string>> = {
  text: (el) => {
    const text = typeof el.text === 'string' ? el.text : '';
    return isRecord(el.style) && el.style.code === true ? `\`${text}\`` : text;
  },
  link: (el) => {
    const url = typeof el.url === 'string' ? el.url : '';
    return typeof el.text === 'string' && el.text !== '' ? `${el.text} (${url})` : url;
  },
  emoji: (el) => (typeof el.unicode === 'string' ? hexToEmoji(el.unicode) : `:${String(el.name)}:`),
  user: (el) => `@${String(el.user_id)}`,
  usergroup: (el) => `@${String(el.usergroup_id)}`,
  channel: (el) => `#${String(el.channel_id)}`,
  broadcast: (el) => `@${String(el.range)}`,
  date: (el) => (typeof el.fallback === 'string' ? el.fallback : String(el.timestamp)),
};

function renderInline(elements: unknown[]): string {
  return elements
    .map((el) => (isRecord(el) && typeof el.type === 'string' && Object.hasOwn(INLINE_TEXT, el.type) ? INLINE_TEXT[el.type]!(el) : ''))
    .join('');
}

function hexToEmoji(unicode: string): string {
  try {
    return String.fromCodePoint(...unicode.split('-').map((h) => Number.parseInt(h, 16)));
  } catch {
    return '';
  }
}

/** Turns Slack mrkdwn escapes and angle-bracket references into readable text; keeps *bold* / _italic_. */
export function mrkdwnToPlain(text: string): string {
  return text
    .replace(/<((?:https?|mailto):[^|>]+)\|([^>]+)>/g, '$2 ($1)')
    .replace(/<((?:https?|mailto):[^>]+)>/g, '$1')
    .replace(/<#([A-Z0-9]+)\|([^>]*)>/g, (_m, id: string, name: string) => `#${name || id}`)
    .replace(/<#([A-Z0-9]+)>/g, '#$1')
    .replace(/<@([A-Z0-9]+)\|([^>]+)>/g, '@$2')
    .replace(/<@([A-Z0-9]+)>/g, '@$1')
    .replace(/<!(here|channel|everyone)(?:\|[^>]*)?>/g, '@$1')
    .replace(/<![^|>]+\|([^>]+)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}
