/**
 * Slack mrkdwn → HTML, for the browser preview of the local Slack server.
 *
 * Safety: every character of the input reaches the output HTML-escaped; the renderer only adds its
 * own fixed tags around escaped text, and links keep only http(s)/mailto targets. Slack's three
 * entities (`&amp;`, `&lt;`, `&gt;`) are decoded first (they show as `&`, `<`, `>`), then escaped again.
 *
 * Supported: *bold*, _italic_, ~strike~, `code`, ```pre```, `<url>` / `<url|text>` links,
 * `<#C…>` / `<#C…|name>` channels, `<@U…>` users, `<!here>`-style broadcasts, `>` quote lines,
 * `<!date^…>` tokens (a `<time>` the page's script shows in the reader's time zone) and the
 * `:emoji:` codes of EMOJI.
 */
import { EMOJI } from './emoji';

/** A JSON field read as text: the string, or '' for anything else. */
export function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** Escapes text for an HTML text node or a double-quoted attribute. */
export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;');
}

/** Slack's escaped control characters as the characters Slack displays. */
function decodeSlackEntities(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&');
}

/** Placeholders mark already-rendered HTML inside text still to format; NUL never survives the input. */
const SLOT = '\u0000';

const SAFE_URL = /^(?:https?:\/\/|mailto:)/i;

/** `html` linked to `url` (a new tab), with `attributes` before the href; undefined for a target other than http(s) or mailto. */
export function linkHtml(url: string, html: string, attributes = ''): string | undefined {
  return SAFE_URL.test(url) ? `<a ${attributes}href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${html}</a>` : undefined;
}

/**
 * `<!date^EPOCH^FORMAT|fallback>` (optionally `^LINK` after the format): a `<time>` carrying the
 * instant and the format; the page's script writes it in the reader's time zone, as Slack does.
 * The fallback shows until then (and to a reader without script).
 */
function renderDate(target: string, label: string | undefined): string | undefined {
  const match = /^!date\^(-?\d{1,12})\^([^^]*)(?:\^(.*))?$/.exec(target);
  if (!match) return undefined;
  const [, seconds = '0', format = '', link] = match;
  const instant = new Date(Number(seconds) * 1000);
  if (Number.isNaN(instant.getTime())) return undefined;
  const time =
    `<time class="slack-date" datetime="${instant.toISOString()}" data-format="${escapeHtml(decodeSlackEntities(format))}">` +
    `${escapeHtml(label ?? instant.toISOString())}</time>`;
  return linkHtml(link === undefined ? '' : decodeSlackEntities(link), time) ?? time;
}

/** `:name:` codes Slack shows as emoji (those in EMOJI; others stay text, as an unknown code does in Slack). */
function withEmoji(text: string, rendered: (emoji: string) => string = (emoji) => emoji): string {
  return text.replace(/:([a-z0-9_+-]+):/g, (code, name: string) => {
    const emoji = EMOJI[name];
    return emoji === undefined ? code : rendered(emoji);
  });
}

/** Channel id → name: messages carry ids, people read names. */
export type Channels = Readonly<Record<string, string>>;

/** One `<…>` reference (link, channel, user, broadcast) as HTML; a channel without a label by its name, as Slack shows it. */
function renderReference(inner: string, channels: Channels): string {
  const bar = inner.indexOf('|');
  const target = bar < 0 ? inner : inner.slice(0, bar);
  const label = bar < 0 ? undefined : decodeSlackEntities(inner.slice(bar + 1));
  if (target.startsWith('#')) return `<span class="mention">#${escapeHtml(label || channels[target.slice(1)] || target.slice(1))}</span>`;
  if (target.startsWith('@')) return `<span class="mention">@${escapeHtml(label || target.slice(1))}</span>`;
  if (target.startsWith('!date^')) {
    const date = renderDate(target, label);
    if (date !== undefined) return date;
  }
  if (target.startsWith('!')) return `<span class="mention">@${escapeHtml(label || target.slice(1).split('^')[0] || '')}</span>`;
  const url = decodeSlackEntities(target);
  const text = escapeHtml(label || url);
  return linkHtml(url, text) ?? text;
}

/** Bold, italic and strike around escaped text: a marker opens after a non-word char and closes before one. */
function applyEmphasis(escaped: string): string {
  const wrap = (marker: string, tag: string) => (text: string) =>
    text.replace(
      new RegExp(`(^|[^\\w${marker}])\\${marker}(?=\\S)([^${marker}\\n]*?\\S)\\${marker}(?![\\w${marker}])`, 'g'),
      `$1<${tag}>$2</${tag}>`,
    );
  return [wrap('*', 'b'), wrap('_', 'i'), wrap('~', 's')].reduce((text, apply) => apply(text), escaped);
}

/** One line (or a run without pre blocks) of mrkdwn as inline HTML. */
function renderInline(mrkdwn: string, channels: Channels): string {
  const slots: string[] = [];
  const stash = (html: string): string => `${SLOT}${slots.push(html) - 1}${SLOT}`;
  let text = mrkdwn.replace(new RegExp(SLOT, 'g'), '');
  text = text.replace(/`([^`\n]+)`/g, (_m, code: string) => stash(`<code>${escapeHtml(decodeSlackEntities(code))}</code>`));
  text = text.replace(/<([^<>\n]+)>/g, (_m, inner: string) => stash(renderReference(inner, channels)));
  text = withEmoji(text, stash);
  const formatted = applyEmphasis(escapeHtml(decodeSlackEntities(text)));
  return formatted.replace(new RegExp(`${SLOT}(\\d+)${SLOT}`, 'g'), (_m, i: string) => slots[Number(i)] ?? '');
}

const QUOTE = /^(?:>|&gt;) ?/;
const BULLET = /^\s*(?:[•◦▪‣-])\s+/;

/** Lines outside pre blocks: quote runs become <blockquote>, bullet lines get a hanging indent. */
function renderLines(lines: string[], channels: Channels): string {
  const out: string[] = [];
  let quote: string[] = [];
  const flushQuote = (): void => {
    if (quote.length > 0) out.push(`<blockquote>${quote.join('<br>')}</blockquote>`);
    quote = [];
  };
  for (const line of lines) {
    if (QUOTE.test(line)) {
      quote.push(renderInline(line.replace(QUOTE, ''), channels));
      continue;
    }
    flushQuote();
    out.push(BULLET.test(line) ? `<span class="bullet">${renderInline(line, channels)}</span>` : `${renderInline(line, channels)}<br>`);
  }
  flushQuote();
  return out.join('').replace(/<br>$/, '');
}

/** A whole mrkdwn text as HTML: ``` blocks as <pre>, the rest line by line. */
export function mrkdwnToHtml(mrkdwn: string, channels: Channels = {}): string {
  const parts = mrkdwn.split(/```/);
  // An odd count of fences leaves the last one literal, as Slack does.
  if (parts.length % 2 === 0) parts[parts.length - 2] = `${parts[parts.length - 2] ?? ''}\`\`\`${parts.pop() ?? ''}`;
  return parts
    .map((part, i) => {
      const trimmed = part.replace(i > 0 ? /^\n/ : /^$/, '').replace(i < parts.length - 1 ? /\n$/ : /^$/, '');
      if (i % 2 === 1) return `<pre>${escapeHtml(decodeSlackEntities(trimmed))}</pre>`;
      return trimmed === '' ? '' : renderLines(trimmed.split('\n'), channels);
    })
    .join('');
}

/** A plain_text object as HTML (only escaped; Slack shows it as written). */
export function plainToHtml(text: string): string {
  return withEmoji(escapeHtml(text)).replace(/\n/g, '<br>');
}
