/**
 * Block Kit → HTML for the browser preview: header, section (text, fields, accessory), context,
 * divider, actions (buttons, a conversations_select listing the workspace's channels), image, rich_text,
 * chart (`data_visualization`, drawn in ./chart) and `data_table` blocks. Unknown blocks show as a
 * labelled placeholder. Images are never loaded (the preview works offline): their alt text is shown instead.
 */
import { asArray as list, isRecord } from '../../shared/util';
import { chartHtml } from './chart';
import { EMOJI } from './emoji';
import { escapeHtml, linkHtml, mrkdwnToHtml, plainToHtml, str, type Channels } from './mrkdwn';

type Obj = Record<string, unknown>;

/** A text object (`mrkdwn` or `plain_text`) as HTML. */
function textObjectHtml(value: unknown, channels: Channels): string {
  if (typeof value === 'string') return mrkdwnToHtml(value, channels);
  if (!isRecord(value)) return '';
  return value.type === 'mrkdwn' ? mrkdwnToHtml(str(value.text), channels) : plainToHtml(str(value.text));
}

function imageHtml(element: Obj): string {
  return `<span class="image" title="image not loaded in the preview">🖼 ${escapeHtml(str(element.alt_text) || 'image')}</span>`;
}

function buttonHtml(element: Obj): string {
  const style = element.style === 'primary' || element.style === 'danger' ? ` ${element.style}` : '';
  const label = plainToHtml(isRecord(element.text) ? str(element.text.text) : '');
  const link = linkHtml(str(element.url), label, `class="button${style}" `);
  if (link !== undefined) return link;
  const actionId = escapeHtml(str(element.action_id));
  return `<button type="button" class="button${style}" title="${actionId}" data-action-id="${actionId}">${label}</button>`;
}

/** A conversations_select as a select of the workspace's channels by name, its placeholder first. */
function channelSelectHtml(element: Obj, channels: Channels): string {
  const placeholder = escapeHtml(isRecord(element.placeholder) ? str(element.placeholder.text) : '');
  const options = Object.entries(channels)
    .sort(([, a], [, b]) => a.localeCompare(b))
    .map(([id, name]) => `<option value="${escapeHtml(id)}"># ${escapeHtml(name)}</option>`);
  return (
    `<select class="select" data-action-id="${escapeHtml(str(element.action_id))}" aria-label="${placeholder}">` +
    `<option value="" selected disabled>${placeholder}</option>${options.join('')}</select>`
  );
}

/** Each interactive or text element (accessory, context or actions item) the preview draws, as HTML. */
const ELEMENT_HTML: Readonly<Record<string, (element: Obj, channels: Channels) => string>> = {
  mrkdwn: (element, channels) => `<span class="element">${textObjectHtml(element, channels)}</span>`,
  plain_text: (element, channels) => `<span class="element">${textObjectHtml(element, channels)}</span>`,
  image: imageHtml,
  button: buttonHtml,
  conversations_select: channelSelectHtml,
};

function elementHtml(element: unknown, channels: Channels): string {
  if (!isRecord(element)) return '';
  const type = str(element.type);
  if (Object.hasOwn(ELEMENT_HTML, type)) return ELEMENT_HTML[type]!(element, channels);
  return `<span class="unknown">[${escapeHtml(type || 'element')}]</span>`;
}

function sectionHtml(block: Obj, channels: Channels): string {
  const text = block.text === undefined ? '' : `<div class="text">${textObjectHtml(block.text, channels)}</div>`;
  const fields = list(block.fields);
  const grid =
    fields.length === 0
      ? ''
      : `<div class="fields">${fields.map((f) => `<div class="field">${textObjectHtml(f, channels)}</div>`).join('')}</div>`;
  const accessory = block.accessory === undefined ? '' : `<div class="accessory">${elementHtml(block.accessory, channels)}</div>`;
  return `<div class="block section"><div class="section-body">${text}${grid}</div>${accessory}</div>`;
}

/** rich_text inline elements (text with style, links, mentions, emoji) as HTML. */
function richInlineHtml(elements: unknown[], channels: Channels): string {
  return elements
    .map((el) => {
      if (!isRecord(el)) return '';
      const style = isRecord(el.style) ? el.style : {};
      let html = '';
      if (el.type === 'text') html = plainToHtml(str(el.text));
      else if (el.type === 'link') {
        const text = escapeHtml(str(el.text) || str(el.url));
        html = linkHtml(str(el.url), text) ?? text;
      } else if (el.type === 'user') html = `<span class="mention">@${escapeHtml(str(el.user_id))}</span>`;
      else if (el.type === 'channel')
        html = `<span class="mention">#${escapeHtml(channels[str(el.channel_id)] ?? str(el.channel_id))}</span>`;
      else if (el.type === 'emoji') html = EMOJI[str(el.name)] ?? escapeHtml(`:${str(el.name)}:`);
      if (style.code === true) html = `<code>${html}</code>`;
      if (style.bold === true) html = `<b>${html}</b>`;
      if (style.italic === true) html = `<i>${html}</i>`;
      if (style.strike === true) html = `<s>${html}</s>`;
      return html;
    })
    .join('');
}

/** A rich_text block's content (its sections, lists, quotes and preformatted runs) as HTML. */
function richTextContentHtml(block: Obj, channels: Channels = {}): string {
  const parts = list(block.elements).map((element) => {
    if (!isRecord(element)) return '';
    const children = list(element.elements);
    switch (element.type) {
      case 'rich_text_list': {
        const tag = element.style === 'ordered' ? 'ol' : 'ul';
        const items = children.map((item) => `<li>${isRecord(item) ? richInlineHtml(list(item.elements), channels) : ''}</li>`).join('');
        return `<${tag}>${items}</${tag}>`;
      }
      case 'rich_text_quote':
        return `<blockquote>${richInlineHtml(children, channels)}</blockquote>`;
      case 'rich_text_preformatted':
        return `<pre>${richInlineHtml(children, channels)}</pre>`;
      default:
        return `<div>${richInlineHtml(children, channels)}</div>`;
    }
  });
  return parts.join('');
}

/** Slack's page size of a data table when the block names none. */
const DEFAULT_TABLE_PAGE_SIZE = 5;

/** A data table cell's content: raw text, a number (its text), or rich text. */
function tableCellHtml(cell: unknown): string {
  if (!isRecord(cell)) return '';
  if (cell.type === 'rich_text') return richTextContentHtml(cell);
  return plainToHtml(typeof cell.text === 'string' ? cell.text : typeof cell.value === 'number' ? String(cell.value) : '');
}

/**
 * A `data_table` block: caption, header row, then the body a page at a time (`page_size`, default 5),
 * the other rows hidden until the pager (run by the page's script) shows them; the row header column's
 * cells are row headers, as screen readers expect.
 */
function dataTableHtml(block: Obj): string {
  const [header = [], ...body] = list(block.rows).map(list);
  const pageSize = typeof block.page_size === 'number' && block.page_size >= 1 ? Math.floor(block.page_size) : DEFAULT_TABLE_PAGE_SIZE;
  const rowHeader = typeof block.row_header_column_index === 'number' ? block.row_header_column_index : 0;
  const numeric = (cell: unknown): string => (isRecord(cell) && cell.type === 'raw_number' ? ' class="num"' : '');
  // A column of numbers is right-aligned, its header too.
  const numberColumn = (c: number): boolean => body.length > 0 && body.every((row) => numeric(row[c]) !== '');
  const head = header.map((cell, c) => `<th scope="col"${numberColumn(c) ? ' class="num"' : ''}>${tableCellHtml(cell)}</th>`).join('');
  const rows = body.map((row, r) => {
    const cells = row.map((cell, c) =>
      c === rowHeader ? `<th scope="row"${numeric(cell)}>${tableCellHtml(cell)}</th>` : `<td${numeric(cell)}>${tableCellHtml(cell)}</td>`,
    );
    return `<tr${r >= pageSize ? ' hidden' : ''}>${cells.join('')}</tr>`;
  });
  const caption = typeof block.caption === 'string' ? `<caption>${plainToHtml(block.caption)}</caption>` : '';
  const shown = Math.min(pageSize, body.length);
  const pager =
    body.length > pageSize
      ? `<div class="table-pager"><span class="table-range">1–${shown} of ${body.length}</span>` +
        `<button type="button" class="button" data-table-page="prev" disabled>‹ Previous</button>` +
        `<button type="button" class="button" data-table-page="next">Next ›</button></div>`
      : '';
  return (
    `<figure class="block data-table" data-page-size="${pageSize}" data-page="0">` +
    `<table>${caption}<thead><tr>${head}</tr></thead><tbody>${rows.join('')}</tbody></table>${pager}</figure>`
  );
}

/** Each block type the preview draws, as HTML; `channels` name the mentions and fill a channel select. */
const BLOCK_HTML: Readonly<Record<string, (block: Obj, channels: Channels) => string>> = {
  header: (block) => `<div class="block header">${plainToHtml(isRecord(block.text) ? str(block.text.text) : '')}</div>`,
  section: sectionHtml,
  context: (block, channels) => `<div class="block context">${elementsHtml(block, channels)}</div>`,
  divider: () => '<hr class="block divider">',
  actions: (block, channels) => {
    // A select's answer names its block (Slack's block_actions carries the block_id).
    const blockId = typeof block.block_id === 'string' ? ` data-block-id="${escapeHtml(block.block_id)}"` : '';
    return `<div class="block actions"${blockId}>${elementsHtml(block, channels)}</div>`;
  },
  image: (block) => `<div class="block">${imageHtml(block)}</div>`,
  rich_text: (block, channels) => `<div class="block rich-text">${richTextContentHtml(block, channels)}</div>`,
  markdown: (block, channels) => textSectionHtml(mrkdwnToHtml(str(block.text), channels)),
  data_visualization: chartHtml,
  data_table: dataTableHtml,
};

function elementsHtml(block: Obj, channels: Channels): string {
  return list(block.elements)
    .map((element) => elementHtml(element, channels))
    .join('');
}

/** One block as HTML; unknown blocks as a labelled placeholder. */
export function blockHtml(block: unknown, channels: Channels = {}): string {
  if (!isRecord(block)) return '';
  const type = str(block.type);
  if (Object.hasOwn(BLOCK_HTML, type)) return BLOCK_HTML[type]!(block, channels);
  return `<div class="block unknown">[${escapeHtml(type || 'unknown')} block]</div>`;
}

/**
 * Text alone in a section, laid out as a section's text: one flowing paragraph. (Straight inside the
 * flex `.section`, every text run and tag became a column of its own.)
 */
function textSectionHtml(html: string): string {
  return `<div class="block section"><div class="section-body"><div class="text">${html}</div></div></div>`;
}

/** A message body: its blocks, or its `text` as mrkdwn when it has none (as Slack shows it). */
export function messageBodyHtml(message: { text?: string | undefined; blocks?: unknown[] | undefined }, channels: Channels = {}): string {
  const blocks = message.blocks ?? [];
  if (blocks.length === 0) return textSectionHtml(mrkdwnToHtml(message.text ?? '', channels));
  return blocks.map((block) => blockHtml(block, channels)).join('');
}
