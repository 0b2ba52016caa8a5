/**
 * The thread: at most three replies, each one message, each only when it has something to say —
 * changes and gaps (engines named once per group), engines and alerts, reasoning.
 */
import { SLACK_LIMITS, truncateText } from '../../../slack-text';
import { orderReasonsByImpact } from '../../reasoning-choice';
import type { KnownBlock } from '@slack/web-api';
import { TABLE_BLOCK_LIMITS } from '../../../slack-blocks/limits';
import { MESSAGE_TEXT_BUDGET, packLines, section, type BlockKitMessage } from '../blocks';
import { formatNumber, formatScalar, humaniseKey, inline, LEN, plural } from '../format';
import { gapCountText, worstGaps, type ComparedFigure, type DigestModel, type EngineView } from '../model';
import { nameFieldIndex } from '../../rows';
import { assess, calledChangeText, spreadNote } from '../significance';
import { deltaText, valueText, variationText } from '../units';
import type { Gap } from '../../../read-api-types';
import { changeLine } from './changes';
import { enginesText, enginesWhere, gapTitle, trendMark } from './gap-line';
import { alertLine } from './rows';
import { enginesTable, gapsTable, type ReplyTable } from './tables';

/** A reply before packing: its lines, the tables that may stand for some of them, and what to say of lines that do not fit. */
export interface ReplyDraft {
  title: string;
  lines: string[];
  more: (hidden: number) => string;
  /** In line order, none overlapping. */
  tables?: readonly ReplyTable[] | undefined;
}

type ReplyPart = { lines: readonly string[] } | { table: ReplyTable };

/** A reply's lines, packed into one message; what does not fit is counted, never silently dropped. */
function packBlocks(parts: readonly ReplyPart[], more: (hidden: number) => string): KnownBlock[] {
  let budget = { maxBlocks: SLACK_LIMITS.blocksPerMessage - 3, maxChars: MESSAGE_TEXT_BUDGET - 400 };
  const blocks: KnownBlock[] = [];
  let hidden = 0;
  for (const part of parts) {
    if ('table' in part) {
      if (hidden === 0 && budget.maxBlocks > 0) {
        blocks.push(part.table.block);
        budget = { ...budget, maxBlocks: budget.maxBlocks - 1 };
      } else hidden += part.table.count;
      continue;
    }
    const packed = packLines(hidden === 0 ? part.lines : [], budget);
    blocks.push(...packed.blocks);
    budget = {
      maxBlocks: budget.maxBlocks - packed.blocks.length,
      maxChars: budget.maxChars - packed.blocks.reduce((n, b) => n + (b.text?.text.length ?? 0), 0),
    };
    hidden += part.lines.length - packed.included;
  }
  return hidden > 0 ? [...blocks, section(more(hidden))] : blocks;
}

/**
 * The reply's parts with its tables in place of their lines, as many tables as fit the message's table
 * characters; a table past them stays lines.
 */
function partsWithTables(draft: ReplyDraft): ReplyPart[] {
  const parts: ReplyPart[] = [];
  let at = 0;
  let chars = 0;
  for (const table of draft.tables ?? []) {
    if (chars + table.chars > TABLE_BLOCK_LIMITS.cellChars) continue;
    chars += table.chars;
    parts.push({ lines: draft.lines.slice(at, table.from) }, { table });
    at = table.from + table.count;
  }
  return [...parts, { lines: draft.lines.slice(at) }];
}

/**
 * A reply as one message. With tables, the mrkdwn lines they stand for are its `fallbackBlocks`, sent
 * if Slack refuses a table.
 */
export function packReply(model: DigestModel, draft: ReplyDraft): BlockKitMessage {
  const text = truncateText(`${draft.title.replace(/\*/g, '')} — ${model.name}`, SLACK_LIMITS.fallbackText);
  const words = packBlocks([{ lines: draft.lines }], draft.more);
  const native = packBlocks(partsWithTables(draft), draft.more);
  return native.some((b) => b.type === 'data_table') ? { text, blocks: native, fallbackBlocks: words } : { text, blocks: words };
}

/** Replies beyond `slots` joined into the last one, so the thread never has more replies than it may. */
export function fitReplies(drafts: readonly ReplyDraft[], slots: number): ReplyDraft[] {
  if (drafts.length <= slots || slots < 1) return drafts.slice(0, Math.max(slots, 0));
  const kept = drafts.slice(0, slots - 1);
  const joined = drafts.slice(slots - 1);
  const [first] = joined;
  if (first === undefined) return kept;
  let offset = 0;
  const tables = joined.flatMap((d) => {
    const shifted = (d.tables ?? []).map((t) => ({ ...t, from: t.from + offset }));
    offset += d.lines.length;
    return shifted;
  });
  return [...kept, { title: first.title, lines: joined.flatMap((d) => d.lines), more: first.more, tables }];
}

// --- 1. Changes and gaps ------------------------------------------------------------------------

/** Rivals listed in the thread. */
const RIVALS_LISTED = 5;

/** A change of a rival's prompts: "+2", "−1", "no change"; null when unknown. */
function signed(n: number | null): string | null {
  if (n === null) return null;
  return n === 0 ? 'no change' : `${n > 0 ? '+' : '\u2212'}${formatNumber(Math.abs(n))}`;
}

function rivalLines(model: DigestModel): string[] {
  if (model.rivals.length === 0) return [];
  const head = `*Who takes your prompts* (of the ${gapCountText(model)} gaps read)`;
  const lines = model.rivals.slice(0, RIVALS_LISTED).map((r) => {
    const changes = [
      signed(r.sinceLastRun) !== null ? `${signed(r.sinceLastRun)} since the last run` : null,
      signed(r.sinceLastWeek) !== null ? `${signed(r.sinceLastWeek)} vs last week` : null,
    ].filter((c): c is string => c !== null);
    return `• *${inline(r.name, LEN.competitor)}* ${plural(r.prompts, 'prompt', 'prompts')} · ${plural(r.engineLosses, 'engine loss', 'engine losses')}${changes.length > 0 ? ` (${changes.join(', ')})` : ''}`;
  });
  const rest = model.rivals.length - RIVALS_LISTED;
  return [head, ...lines, ...(rest > 0 ? [`_+${rest} more rivals_`] : [])];
}

/** What changed for one gap: a new gap, a new winner, engines newly lost or won back. */
function gapNews(model: DigestModel, gap: Gap, fresh: ReadonlySet<string>): string {
  const shift = model.shifts.get(gap.prompt_id);
  const parts: string[] = [];
  if (fresh.has(gap.prompt_id)) parts.push('✦ new');
  if (shift?.previousWinner)
    parts.push(`${inline(gap.top_competitor, LEN.competitor)} took it from ${inline(shift.previousWinner, LEN.competitor)}`);
  const spread = spreadNote(model, gap);
  if (spread.length > 0) parts.push(spread.replace(/^ — /, ''));
  if (shift && shift.wonBack.length > 0) parts.push(`won back on ${enginesText(shift.wonBack)}`);
  return parts.length > 0 ? ` · ${parts.join(' · ')}` : fresh.has(gap.prompt_id) ? '' : trendMark(gap);
}

/** Gaps grouped by the engines they are lost on (groups in order of their worst gap, by impact); engines named once per group. */
function gapGroups(model: DigestModel): string[] {
  const groups = new Map<string, Gap[]>();
  for (const gap of worstGaps(model)) {
    const key = [...gap.platforms_losing]
      .map((p) => p.trim())
      .sort()
      .join('\u0000');
    groups.set(key, [...(groups.get(key) ?? []), gap]);
  }
  const fresh = new Set(model.diff.newGaps.map((g) => g.prompt_id));
  return [...groups.values()].flatMap((gaps) => {
    const engines = gaps[0]?.platforms_losing ?? [];
    const named = enginesWhere(model, engines);
    const where = engines.length === 0 ? 'No engine named' : named.startsWith('all ') ? `All${named.slice(3)}` : `On ${named}`;
    const head = `_${where}_ (${formatNumber(gaps.length)})`;
    return [
      head,
      ...gaps.map((g) => {
        const rival = inline(g.top_competitor, LEN.competitor);
        return `• ${gapTitle(model, g, 120)}${rival.length > 0 ? ` → ${rival}` : ''}${gapNews(model, g, fresh)}`;
      }),
    ];
  });
}

function goneLines(model: DigestModel): string[] {
  const { resolvedGaps, leftTopGaps } = model.diff;
  const line = (tag: string) => (g: (typeof resolvedGaps)[number]) => `• _${tag}:_ ${gapTitle(model, g, 120)}`;
  if (resolvedGaps.length + leftTopGaps.length === 0) return [];
  const head = `*No longer in the list*${leftTopGaps.length > 0 ? ` (${formatNumber(leftTopGaps.length)} left the top ${formatNumber(model.input.pageSize ?? model.gaps.length)}: still open or unknown, not resolved)` : ''}`;
  return [head, ...resolvedGaps.map(line('Resolved')), ...leftTopGaps.map(line('Left the top list'))];
}

export function changesAndGapsReply(model: DigestModel): ReplyDraft | null {
  const changes = assess(model).changes.map((item) => changeLine(model, item));
  const unreadable = model.unreadable > 0 ? ` · ${plural(model.unreadable, 'gap entry', 'gap entries')} could not be read` : '';
  const gaps = gapGroups(model);
  const before = [...(changes.length > 0 ? ['*What changed*', ...changes] : []), ...goneLines(model), ...rivalLines(model)];
  const read = `${gapCountText(model)} read${model.truncated ? `, the service's top ${formatNumber(model.input.pageSize ?? 0)}` : ''}${unreadable}`;
  const lines = [...before, ...(gaps.length > 0 ? [`*Open gaps* (${read}), by the engines they are lost on`, ...gaps] : [])];
  if (lines.length === 0) return null;
  const table = gaps.length > 0 ? gapsTable(model, `Open gaps (${read}), worst first`, before.length, 1 + gaps.length) : null;
  return {
    title: '*Changes and gaps*',
    lines,
    more: (hidden) => `_${plural(hidden, 'more line', 'more lines')} not shown: the dashboard lists every gap._`,
    tables: table === null ? [] : [table],
  };
}

// --- 2. Engines and alerts ----------------------------------------------------------------------

/**
 * A figure's change as the verdict judged it: "(−12.1 pts — worse)" when called (from its usual level,
 * "over 3 runs" when it built up), "(−3.5 pts since the last run, within normal variation ±6.1 pts)"
 * when not, "(unchanged)" for no move; nothing when not judged.
 */
function judgedChange(figure: ComparedFigure): string {
  const call = figure.call;
  if (call === null || call.call === 'unjudged' || figure.delta === null) return '';
  if (figure.significant) return ` (${calledChangeText(figure)} — ${figure.tone ?? ''})`;
  if (figure.delta === 0) return ' (unchanged)';
  const band = call.band !== null ? `, within normal variation ${variationText(figure.reading, call.band)}` : '';
  return ` (${deltaText(figure.reading, figure.delta) ?? ''} since the last run${band})`;
}

function engineLine(engine: EngineView): string {
  const at = nameFieldIndex(engine.row);
  const name = engine.name !== null ? inline(engine.name, LEN.rowName) || '(unnamed engine)' : '(unnamed engine)';
  const main = engine.field === null ? '' : ` ${valueText(engine.reading, engine.value, null)}${judgedChange(engine)}`;
  const rest = engine.row
    .filter((_, i) => i !== at && engine.row[i]?.[0] !== engine.field)
    .map(([field, value]) => `${humaniseKey(field)} ${formatScalar(value, LEN.fieldValue)}`)
    .join(' · ');
  return `• *${name}*${main}${rest.length > 0 ? ` · ${rest}` : ''}`;
}

function otherFigures(model: DigestModel): string[] {
  const lines = model.metrics.map(
    (m) => `• *${inline(m.label, LEN.label) || '—'}* ${valueText(m.reading, m.value, m.raw)}${judgedChange(m)}`,
  );
  return lines.length > 0 ? ['*Figures*', ...lines] : [];
}

function aboutLines(model: DigestModel): string[] {
  const captions = model.metrics.flatMap((m) => {
    const caption = m.caption === null ? '' : inline(m.caption, LEN.caption);
    return caption.length > 0 ? [`• *${inline(m.label, LEN.label) || '—'}*: ${caption}`] : [];
  });
  return captions.length > 0 ? ['*About these figures*', ...captions] : [];
}

/** True when this digest shows "About these figures" (once per channel). */
export function showsAbout(model: DigestModel): boolean {
  return model.input.options?.aboutShown !== true && aboutLines(model).length > 0;
}

export function enginesAndAlertsReply(model: DigestModel): ReplyDraft | null {
  const engines = model.engines.map(engineLine);
  const alerts = model.alerts.map(alertLine);
  const lines = [
    ...(engines.length > 0 ? [`*AI engines* (${formatNumber(engines.length)})`, ...engines] : []),
    ...(alerts.length > 0 ? [`*Alerts* (${formatNumber(alerts.length)}, most severe first)`, ...alerts] : []),
    ...otherFigures(model),
    ...(showsAbout(model) ? aboutLines(model) : []),
  ];
  if (lines.length === 0) return null;
  const table = engines.length > 0 ? enginesTable(model, 0) : null;
  return {
    title: '*Engines and alerts*',
    lines,
    more: (hidden) => `_${plural(hidden, 'more line', 'more lines')} on the dashboard._`,
    tables: table === null ? [] : [table],
  };
}

// --- 3. Reasoning -------------------------------------------------------------------------------

/** Reasons per card (highest impact first). */
const REASONS_SHOWN = 4;

export function reasoningReply(model: DigestModel, count: number): ReplyDraft | null {
  const cards = model.gaps.slice(0, count).flatMap((gap) => {
    const card = model.input.reasoning.get(gap.prompt_id) ?? null;
    const reasons = card === null ? [] : orderReasonsByImpact(card.reasons);
    if (reasons.length === 0) return [];
    const engine = card?.engine ? inline(card.engine, LEN.platform) : '';
    const head = `${gapTitle(model, gap, 160)}${engine.length > 0 ? ` — card from ${engine}` : ''}`;
    const lines = reasons
      .slice(0, REASONS_SHOWN)
      .map(
        (r) =>
          `• *${inline(r.impact, LEN.impact) || '—'}* · ${inline(r.category, LEN.category) || '—'} · ${inline(r.detail, LEN.detail) || '—'}`,
      );
    const more = reasons.length > REASONS_SHOWN ? [`_+${plural(reasons.length - REASONS_SHOWN, 'more reason', 'more reasons')}_`] : [];
    return [head, ...lines, ...more];
  });
  if (cards.length === 0) return null;
  return {
    title: '*Why the top gaps are lost*',
    lines: ['*Why the top gaps are lost* (reasoning cards, highest impact first)', ...cards],
    more: (hidden) => `_${plural(hidden, 'more line', 'more lines')} on the dashboard._`,
  };
}
