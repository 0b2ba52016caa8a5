/**
 * Block Kit → HTML for the browser preview: header, section (text, fields, accessory), context,
 * divider, actions (buttons), image, rich_text, chart (`data_visualization`, drawn in ./chart) and
 * `data_table` blocks. Unknown blocks show as a labelled placeholder. Images are never loaded (the
 * preview works offline): their alt text is shown instead.
 */
import { isRecord } from '../../shared/util';
import { chartHtml } from './chart';
import { EMOJI } from './emoji';
import { escapeHtml, mrkdwnToHtml, plainToHtml, renderInline } from './mrkdwn';

type Obj = Record<string, unknown>;

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? (value as unknown[]) : [];
}

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/** A text object (`mrkdwn` or `plain_text`) as HTML. */
export function textObjectHtml(value: unknown): string {
  if (typeof value === 'string') return mrkdwnToHtml(value);
  if (!isRecord(value)) return '';
  return value.type === 'mrkdwn' ? mrkdwnToHtml(str(value.text)) : plainToHtml(str(value.text));
}

function imageHtml(element: Obj): string {
  return `<span class="image" title="image not loaded in the preview">🖼 ${escapeHtml(str(element.alt_text) || 'image')}</span>`;
}

const SAFE_URL = /^(?:https?:\/\/|mailto:)/i;

function buttonHtml(element: Obj): string {
  const style = element.style === 'primary' || element.style === 'danger' ? ` ${element.style}` : '';
  const label = plainToHtml(isRecord(element.text) ? str(element.text.text) : '');
  const url = str(element.url);
  if (SAFE_URL.test(url))
    return `<a class="button${style}" href="${escapeHtml(url)}" target="_blank" rel="noopener noreferrer">${label}</a>`;
  const actionId = escapeHtml(str(element.action_id));
  return `<button type="button" class="button${style}" title="${actionId}" data-action-id="${actionId}">${label}</button>`;
}

/** An interactive or text element (accessory, context or actions item) as HTML. */
function elementHtml(element: unknown): string {
  if (!isRecord(element)) return '';
  switch (element.type) {
    case 'mrkdwn':
    case 'plain_text':
      return `<span class="element">${textObjectHtml(element)}</span>`;
    case 'image':
      return imageHtml(element);
    case 'button':
      return buttonHtml(element);
    default:
      return `<span class="unknown">[${escapeHtml(str(element.type) || 'element')}]</span>`;
  }
}

function sectionHtml(block: Obj): string {
  const text = block.text === undefined ? '' : `<div class="text">${textObjectHtml(block.text)}</div>`;
  const fields = list(block.fields);
  const grid =
    fields.length === 0 ? '' : `<div class="fields">${fields.map((f) => `<div class="field">${textObjectHtml(f)}</div>`).join('')}</div>`;
  const accessory = block.accessory === undefined ? '' : `<div class="accessory">${elementHtml(block.accessory)}</div>`;
  return `<div class="block section"><div class="section-body">${text}${grid}</div>${accessory}</div>`;
}

/** rich_text inline elements (text with style, links, mentions, emoji) as HTML. */
function richInlineHtml(elements: unknown[]): string {
  return elements
    .map((el) => {
      if (!isRecord(el)) return '';
      const style = isRecord(el.style) ? el.style : {};
      let html = '';
      if (el.type === 'text') html = plainToHtml(str(el.text));
      else if (el.type === 'link')
        html = renderInline(`<${escapeSlack(str(el.url))}${str(el.text) ? `|${escapeSlack(str(el.text))}` : ''}>`);
      else if (el.type === 'user') html = `<span class="mention">@${escapeHtml(str(el.user_id))}</span>`;
      else if (el.type === 'channel') html = `<span class="mention">#${escapeHtml(str(el.channel_id))}</span>`;
      else if (el.type === 'emoji') html = EMOJI[str(el.name)] ?? escapeHtml(`:${str(el.name)}:`);
      if (style.code === true) html = `<code>${html}</code>`;
      if (style.bold === true) html = `<b>${html}</b>`;
      if (style.italic === true) html = `<i>${html}</i>`;
      if (style.strike === true) html = `<s>${html}</s>`;
      return html;
    })
    .join('');
}

function escapeSlack(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/\|/g, '¦');
}

/** A rich_text block's content (its sections, lists, quotes and preformatted runs) as HTML. */
function richTextContentHtml(block: Obj): string {
  const parts = list(block.elements).map((element) => {
    if (!isRecord(element)) return '';
    const children = list(element.elements);
    switch (element.type) {
      case 'rich_text_list': {
        const tag = element.style === 'ordered' ? 'ol' : 'ul';
        const items = children.map((item) => `<li>${isRecord(item) ? richInlineHtml(list(item.elements)) : ''}</li>`).join('');
        return `<${tag}>${items}</${tag}>`;
      }
      case 'rich_text_quote':
        return `<blockquote>${richInlineHtml(children)}</blockquote>`;
      case 'rich_text_preformatted':
        return `<pre>${richInlineHtml(children)}</pre>`;
      default:
        return `<div>${richInlineHtml(children)}</div>`;
    }
  });
  return parts.join('');
}

function richTextHtml(block: Obj): string {
  return `<div class="block rich-text">${richTextContentHtml(block)}</div>`;
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

/** One block as HTML. */
export function blockHtml(block: unknown): string {
  if (!isRecord(block)) return '';
  switch (block.type) {
    case 'header':
      return `<div class="block header">${plainToHtml(isRecord(block.text) ? str(block.text.text) : '')}</div>`;
    case 'section':
      return sectionHtml(block);
    case 'context':
      return `<div class="block context">${list(block.elements).map(elementHtml).join('')}</div>`;
    case 'divider':
      return '<hr class="block divider">';
    case 'actions':
      return `<div class="block actions">${list(block.elements).map(elementHtml).join('')}</div>`;
    case 'image':
      return `<div class="block">${imageHtml(block)}</div>`;
    case 'rich_text':
      return richTextHtml(block);
    case 'markdown':
      return textSectionHtml(mrkdwnToHtml(str(block.text)));
    case 'data_visualization':
      return chartHtml(block);
    case 'data_table':
      return dataTableHtml(block);
    default:
      return `<div class="block unknown">[${escapeHtml(str(block.type) || 'unknown')} block]</div>`;
  }
}

/**
 * Text alone in a section, laid out as a section's text: one flowing paragraph. (Straight inside the
 * flex `.section`, every text run and tag became a column of its own.)
 */
function textSectionHtml(html: string): string {
  return `<div class="block section"><div class="section-body"><div class="text">${html}</div></div></div>`;
}

/** A message body: its blocks, or its `text` as mrkdwn when it has none (as Slack shows it). */
export function messageBodyHtml(message: { text?: string | undefined; blocks?: unknown[] | undefined }): string {
  const blocks = message.blocks ?? [];
  if (blocks.length === 0) return textSectionHtml(mrkdwnToHtml(message.text ?? ''));
  return blocks.map(blockHtml).join('');
}
