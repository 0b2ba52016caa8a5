/**
 * Block Kit → HTML for the browser preview: header, section (text, fields, accessory), context,
 * divider, actions (buttons), image and rich_text blocks. Unknown blocks show as a labelled
 * placeholder. Images are never loaded (the preview works offline): their alt text is shown instead.
 */
import { isRecord } from '../../shared/util';
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

function richTextHtml(block: Obj): string {
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
  return `<div class="block rich-text">${parts.join('')}</div>`;
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
