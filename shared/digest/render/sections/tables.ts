/**
 * The thread's two long lists as Slack's data tables (issue 30): the AI engines (value, change, and
 * whether the change is beyond normal variation, as the verdict called it: never judged here) and the
 * open gaps (prompt, engines lost, rival, trend). Each table stands for a run of its reply's lines, the
 * mrkdwn the reply shows where the table does not fit Slack's limits (slack-blocks/limits.ts) or Slack
 * refuses it. Cell text is literal (`plainServiceText`): Slack parses no mrkdwn in a table.
 */
import type { DataTableBlock, RawTextElement, RichTextBlock } from '@slack/web-api';
import { TABLE_BLOCK_LIMITS } from '../../../slack-blocks/limits';
import { plainServiceText } from '../../../slack-text';
import { gapTrend, TREND_MARKS } from '../../gap-trend';
import type { Scalar } from '../../../read-api-types';
import { nameFieldIndex } from '../../rows';
import { formatNumber, humaniseKey } from '../format';
import { engineTotal, worstGaps, type DigestModel, type EngineView } from '../model';
import { calledChangeText } from '../significance';
import { deltaText, valueText, variationText } from '../units';

/** A table and the lines `[from, from + count)` of its reply that say the same in mrkdwn. */
export interface ReplyTable {
  block: DataTableBlock;
  from: number;
  count: number;
  /** Characters of its cells, as Slack counts them against `TABLE_BLOCK_LIMITS.cellChars`. */
  chars: number;
}

/** Rows shown per page: a reply stays short, the rest a click away. */
const PAGE_SIZE = 10;
/** Cell bounds: a row stays one line on a laptop. */
const CELL = { name: 40, value: 40, prompt: 90, engines: 60, rival: 80, news: 100 } as const;
const EMPTY_CELL = '—';

type Cell = RawTextElement | RichTextBlock;

function header(text: string): RawTextElement {
  return { type: 'raw_text', text };
}

/** A body cell: its text, linked when there is a link (a prompt to its page on the dashboard). */
function cell(text: string, url: string | null = null): RichTextBlock {
  const shown = text.length > 0 ? text : EMPTY_CELL;
  return {
    type: 'rich_text',
    elements: [
      { type: 'rich_text_section', elements: [url === null ? { type: 'text', text: shown } : { type: 'link', url, text: shown }] },
    ],
  };
}

function cellText(c: Cell): string {
  if (c.type === 'raw_text') return c.text;
  const [section] = c.elements;
  const [inline] = section?.type === 'rich_text_section' ? section.elements : [];
  return inline?.type === 'text' || inline?.type === 'link' ? (inline.text ?? '') : '';
}

/** The table of `head` and `body` in place of `count` lines from `from`; null past Slack's limits. */
function table(
  caption: string,
  head: readonly string[],
  body: readonly (readonly Cell[])[],
  from: number,
  count: number,
): ReplyTable | null {
  if (body.length < 1 || body.length > TABLE_BLOCK_LIMITS.bodyRows || head.length > TABLE_BLOCK_LIMITS.columns) return null;
  const rows: Cell[][] = [head.map(header), ...body.map((row) => [...row])];
  const chars = rows.flat().reduce((sum, c) => sum + cellText(c).length, 0);
  if (chars > TABLE_BLOCK_LIMITS.cellChars) return null;
  const block: DataTableBlock = {
    type: 'data_table',
    caption: plainServiceText(caption, TABLE_BLOCK_LIMITS.captionChars),
    rows,
    page_size: Math.min(PAGE_SIZE, body.length),
  };
  return { block, from, count, chars };
}

/** What the verdict made of an engine's change: beyond or within its normal variation, or not judged. */
function variationCell(engine: EngineView): string {
  const call = engine.call;
  if (call === null || call.call === 'unjudged' || engine.delta === null) return 'not judged';
  if (engine.significant) return `beyond normal variation${engine.tone !== null ? ` (${engine.tone})` : ''}`;
  return call.band !== null ? `within normal variation ${variationText(engine.reading, call.band)}` : 'within normal variation';
}

function changeCell(engine: EngineView): string {
  if (engine.significant) return calledChangeText(engine);
  if (engine.delta === 0) return 'unchanged';
  return deltaText(engine.reading, engine.delta) ?? '';
}

/** The fields of a row besides its name and its compared figure. */
function otherCells(engine: EngineView): (readonly [string, Scalar])[] {
  const at = nameFieldIndex(engine.row);
  return engine.row.filter(([field], i) => i !== at && field !== engine.field);
}

/** A field's value as literal text (numbers as the digest writes them). */
function plainScalar(value: Scalar): string {
  if (typeof value === 'number') return Number.isFinite(value) ? formatNumber(value) : '';
  return value === null ? '' : String(value);
}

/**
 * The engines reply's table, standing for its heading and one line per engine from line `from`: the
 * compared figure's columns, then a column for each other field a row has (in order of first appearance).
 */
export function enginesTable(model: DigestModel, from: number): ReplyTable | null {
  const others = [...new Set(model.engines.flatMap((engine) => otherCells(engine).map(([field]) => field)))];
  const body = model.engines.map((engine) => {
    const fields = new Map(otherCells(engine));
    return [
      plainServiceText(engine.name ?? '', CELL.name) || '(unnamed engine)',
      engine.field === null ? '' : plainServiceText(valueText(engine.reading, engine.value, null), CELL.value),
      changeCell(engine),
      variationCell(engine),
      ...others.map((field) => plainServiceText(plainScalar(fields.get(field) ?? null), CELL.value)),
    ].map((text) => cell(text));
  });
  const head = [
    'Engine',
    'Value',
    'Change',
    'Variation',
    ...others.map((field) => plainServiceText(humaniseKey(field), CELL.name) || EMPTY_CELL),
  ];
  return table(`AI engines (${formatNumber(body.length)})`, head, body, from, 1 + body.length);
}

/** Where a gap is lost, as literal text: "all 5 engines" when it is every engine measured. */
function enginesLost(model: DigestModel, engines: readonly string[]): string {
  const total = engineTotal(model);
  if (total > 1 && new Set(engines.map((e) => e.trim().toLowerCase())).size >= total) return `all ${formatNumber(total)} engines`;
  return plainServiceText(engines.join(', '), CELL.engines);
}

function promptCell(ref: unknown, text: string): string {
  const shown = plainServiceText(text, CELL.prompt) || '(no question text)';
  if (typeof ref !== 'string' && typeof ref !== 'number') return shown;
  const cleaned = plainServiceText(String(ref).replace(/^\s*#/, ''), 24);
  return cleaned.length > 0 ? `#${cleaned} ${shown}` : shown;
}

/** The open gaps' table (worst first), standing for `count` lines from `from` (heading and groups). */
export function gapsTable(model: DigestModel, caption: string, from: number, count: number): ReplyTable | null {
  const fresh = new Set(model.diff.newGaps.map((g) => g.prompt_id));
  const body = worstGaps(model).map((gap) => {
    const shift = model.shifts.get(gap.prompt_id);
    const trend = fresh.has(gap.prompt_id) ? 'new' : gapTrend(gap);
    const taken = shift?.previousWinner ? ` (took it from ${shift.previousWinner})` : '';
    const news = [
      trend === null ? '' : TREND_MARKS[trend],
      shift && shift.newEngines.length > 0 ? `now also lost on ${shift.newEngines.join(', ')}` : '',
      shift && shift.wonBack.length > 0 ? `won back on ${shift.wonBack.join(', ')}` : '',
    ].filter((part) => part.length > 0);
    return [
      cell(promptCell(gap.prompt_ref, gap.prompt_text), model.promptUrl(gap.prompt_id)),
      cell(enginesLost(model, gap.platforms_losing)),
      cell(plainServiceText(`${gap.top_competitor}${taken}`, CELL.rival)),
      cell(plainServiceText(news.join(' · '), CELL.news)),
    ];
  });
  return table(caption, ['Prompt', 'Engines lost', 'Rival', 'Trend'], body, from, count);
}
