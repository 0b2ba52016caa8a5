/**
 * Pure rendering of the Slack digest (no I/O, no clock): a main message plus thread replies, and the
 * draft.ready notice.
 *
 * Safety: every API-sourced string is escaped (`escapeSlackText`), whitespace-collapsed and cut to a
 * per-field length; mrkdwn text objects are `verbatim` so Slack does not auto-link URLs or channel names
 * found in API text. The renderer itself never emits `<…>` markup.
 *
 * Limits: every message stays within `SLACK_LIMITS` (≤ 50 blocks, section text ≤ 3000, ≤ 10 fields of
 * ≤ 2000, block text in total ≤ `MESSAGE_TEXT_BUDGET`). Lists that do not fit end with "+N more …".
 */
import type { ContextBlock, DividerBlock, HeaderBlock, KnownBlock, MrkdwnElement, SectionBlock } from '@slack/web-api';
import type { Gap, GenericRow, Project, ReasoningCard, Scalar, VisibilityOverview } from '../read-api-types';
import type { SlackMessage } from '../ports';
import { SLACK_LIMITS, blocksTextLength, escapeAndTruncate, truncateText } from '../slack-text';
import { diffSnapshots, type ProjectSnapshot, type SnapshotGap } from './snapshot';

/**
 * The poster's `SlackMessage` (fallback text plus blocks; see shared/slack-poster.ts) with its blocks
 * typed as Block Kit blocks, so callers and tests can inspect them. Assignable to `SlackMessage`.
 */
export interface BlockKitMessage extends SlackMessage {
  blocks: KnownBlock[];
}

export interface DigestInput {
  project: Project;
  /** From the run.completed event: its id, data.run_id, data.answers and created_at. */
  run: { eventId: string; runId: string; answers: number | null; createdAt: string };
  overview: VisibilityOverview;
  /** In API order: the first is the worst. */
  gaps: Gap[];
  /** The snapshot stored by the previous digest of this project; null for the first digest. */
  previous: ProjectSnapshot | null;
  /** Reasoning card by prompt_id for the top gaps; null or missing = no card. */
  reasoning: ReadonlyMap<string, ReasoningCard | null>;
  options?: {
    /** Gaps listed in the main message (default 5). */
    topGaps?: number;
    /** Top gaps whose reasoning card gets a thread reply (default 3). */
    reasoningGaps?: number;
    /** Thread replies used for the gaps beyond the main message (default 4); the rest are counted. */
    maxGapReplies?: number;
  };
}

export interface RenderedDigest {
  main: BlockKitMessage;
  /** Replies to post in the main message's thread, in order. May be empty. */
  thread: BlockKitMessage[];
}

/** Block text per message, kept below `SLACK_LIMITS.messageTotalText` for headroom. */
export const MESSAGE_TEXT_BUDGET = 9_000;

/** Maximum lengths (escaped UTF-16 code units) of API-sourced pieces. */
const LEN = {
  projectName: 120,
  label: 60,
  value: 60,
  caption: 160,
  ref: 24,
  promptText: 250,
  platform: 30,
  platformsShown: 5,
  competitor: 60,
  rowName: 60,
  fieldName: 40,
  fieldValue: 80,
  rowFieldsShown: 8,
  impact: 40,
  category: 60,
  detail: 500,
  id: 80,
  version: 100,
} as const;

/** Main-message budgets per part (characters, blocks). Their sum stays under MESSAGE_TEXT_BUDGET. */
const MAIN = {
  metrics: { chars: 2_400, blocks: 2 },
  engines: { chars: 1_200, blocks: 2 },
  alerts: { chars: 1_200, blocks: 2 },
  gaps: { chars: 3_000, blocks: 2 },
} as const;

const DEFAULT_TOP_GAPS = 5;
const DEFAULT_REASONING_GAPS = 3;
const DEFAULT_MAX_GAP_REPLIES = 4;

// ---------------------------------------------------------------------------------------------
// Formatting of values

// Created on first use: ICU start-up costs ~20 ms, which would otherwise land in every cold start.
let numberFormats: { usual: Intl.NumberFormat; small: Intl.NumberFormat } | undefined;

/** API text for one line: whitespace runs collapsed, escaped, cut to `max`. */
function inline(text: string, max: number): string {
  return escapeAndTruncate(text.replace(/\s+/g, ' ').trim(), max);
}

function formatNumber(n: number): string {
  numberFormats ??= {
    usual: new Intl.NumberFormat('en-US', { maximumFractionDigits: 2 }),
    small: new Intl.NumberFormat('en-US', { maximumSignificantDigits: 2 }),
  };
  const shown = numberFormats.usual.format(n);
  return shown === '0' && n !== 0 ? numberFormats.small.format(n) : shown;
}

/** A scalar of any type for display: numbers en-US formatted, booleans yes/no, null or blank → "—". */
export function formatScalar(value: Scalar, max: number = LEN.value): string {
  if (value === null) return '—';
  if (typeof value === 'number') return Number.isFinite(value) ? formatNumber(value) : '—';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  const text = inline(value, max);
  return text.length === 0 ? '—' : text;
}

/** "▲ 3.2", "▼ 1", "no change", or null when there is no numeric delta (first digest, non-numeric). */
export function formatDelta(delta: number | null | undefined): string | null {
  if (delta === null || delta === undefined || !Number.isFinite(delta)) return null;
  if (delta === 0) return 'no change';
  return `${delta > 0 ? '▲' : '▼'} ${formatNumber(Math.abs(delta))}`;
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/i;

/**
 * An ISO 8601 timestamp as "YYYY-MM-DD HH:MM UTC" (a timestamp without offset is read as UTC, so the
 * result never depends on the host's time zone). Anything else is shown as given (escaped).
 */
export function formatEventTime(timestamp: string): string {
  const match = ISO_TIMESTAMP.exec(timestamp.trim());
  const ms = match ? Date.parse(match[1] === undefined ? `${timestamp.trim()}Z` : timestamp.trim()) : Number.NaN;
  if (!Number.isFinite(ms)) {
    const raw = inline(timestamp, 40);
    return raw.length === 0 ? 'unknown time' : raw;
  }
  const iso = new Date(ms).toISOString();
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

function plural(n: number, one: string, many: string): string {
  return `${formatNumber(n)} ${n === 1 ? one : many}`;
}

function projectName(project: Project | null, projectId: string): string {
  const name = project !== null ? inline(project.name, LEN.projectName) : '';
  return name.length > 0 ? name : inline(projectId, LEN.projectName) || 'unknown project';
}

function refText(ref: Scalar): string {
  if (ref === null) return '';
  if (typeof ref === 'number') return Number.isFinite(ref) ? String(ref) : '';
  if (typeof ref === 'boolean') return String(ref);
  return inline(ref.replace(/^\s*#/, ''), LEN.ref);
}

function inlineList(values: readonly string[], maxEach: number, maxShown: number): string {
  const shown = values
    .map((v) => inline(v, maxEach))
    .filter((v) => v.length > 0);
  const visible = shown.slice(0, maxShown);
  const hidden = shown.length - visible.length;
  return visible.join(', ') + (hidden > 0 ? ` +${hidden} more` : '');
}

/** "#12 question" part of a gap (reference bold), shared by gap lines, resolved lines and reasoning heads. */
function gapTitle(ref: Scalar, promptText: string, maxText: number = LEN.promptText): string {
  const r = refText(ref);
  const text = inline(promptText, maxText);
  return [r.length > 0 ? `*#${r}*` : '', text.length > 0 ? text : '(no question text)'].filter((p) => p.length > 0).join(' ');
}

/** `#<prompt_ref> <prompt_text> — losing on <platforms> to <top_competitor>`, with a rank or bullet prefix. */
function gapLine(gap: Gap, prefix: string): string {
  const platforms = inlineList(gap.platforms_losing, LEN.platform, LEN.platformsShown);
  const competitor = inline(gap.top_competitor, LEN.competitor);
  let losing = '';
  if (platforms.length > 0 && competitor.length > 0) losing = ` — losing on ${platforms} to ${competitor}`;
  else if (platforms.length > 0) losing = ` — losing on ${platforms}`;
  else if (competitor.length > 0) losing = ` — losing to ${competitor}`;
  return `${prefix}${gapTitle(gap.prompt_ref, gap.prompt_text)}${losing}`;
}

function resolvedLine(gap: SnapshotGap): string {
  return `• ${gapTitle(gap.prompt_ref, gap.prompt_text)}`;
}

/** A row whose field names are not known: the first field's value as its name, the others `field: value`. */
function rowLine(row: GenericRow): string {
  const first = row[0];
  if (first === undefined) return '• (empty row)';
  const rest = row.slice(1);
  const shown = rest.slice(0, LEN.rowFieldsShown).map(([field, value]) => {
    const name = inline(field, LEN.fieldName);
    return `${name.length > 0 ? name : '—'}: ${formatScalar(value, LEN.fieldValue)}`;
  });
  const hidden = rest.length - shown.length;
  if (hidden > 0) shown.push(`+${hidden} more ${hidden === 1 ? 'field' : 'fields'}`);
  return `• *${formatScalar(first[1], LEN.rowName)}*${shown.length > 0 ? ` — ${shown.join(' · ')}` : ''}`;
}

function reasonLine(reason: { impact: string; category: string; detail: string }): string {
  const part = (text: string, max: number): string => {
    const shown = inline(text, max);
    return shown.length > 0 ? shown : '—';
  };
  return `• ${part(reason.impact, LEN.impact)} · ${part(reason.category, LEN.category)} · ${part(reason.detail, LEN.detail)}`;
}

// ---------------------------------------------------------------------------------------------
// Packing lists into blocks

interface PackLimits {
  maxChunks: number;
  /** Characters across all chunks (joiners included). */
  maxTotal: number;
  /** Characters per chunk (joiners included). */
  maxChunkChars: number;
  maxChunkItems: number;
  /** Any single item longer than this is cut (safety net; callers keep items short). */
  maxItemChars: number;
  joiner: string;
  /** Items beyond this count are never included (they count as hidden). */
  maxItems?: number | undefined;
}

interface Packed {
  chunks: string[][];
  /** How many leading items were included. */
  included: number;
}

/**
 * Greedily packs items, in order, into chunks within `limits`. When items are left out and `more` is
 * given, a last item `more(hidden)` is added; room for it is guaranteed by backing off as needed.
 */
function pack(items: readonly string[], limits: PackLimits, more?: (hidden: number) => string): Packed {
  const safe = items.map((item) => truncateText(item, limits.maxItemChars));
  const chunks: string[][] = [];
  let lastLen = 0;
  let total = 0;

  const placement = (item: string): 'append' | 'new' | null => {
    const last = chunks.at(-1);
    const joined = limits.joiner.length + item.length;
    if (last !== undefined && last.length < limits.maxChunkItems && lastLen + joined <= limits.maxChunkChars && total + joined <= limits.maxTotal) {
      return 'append';
    }
    if (chunks.length < limits.maxChunks && item.length <= limits.maxChunkChars && total + item.length <= limits.maxTotal) return 'new';
    return null;
  };
  const place = (item: string): boolean => {
    const where = placement(item);
    if (where === 'append') {
      const last = chunks.at(-1);
      if (last === undefined) return false;
      last.push(item);
      lastLen += limits.joiner.length + item.length;
      total += limits.joiner.length + item.length;
    } else if (where === 'new') {
      chunks.push([item]);
      lastLen = item.length;
      total += item.length;
    }
    return where !== null;
  };

  const n = safe.length;
  const limit = Math.min(n, limits.maxItems ?? n);
  let best = 0;
  let k = 0;
  for (;; k += 1) {
    if (k === n) {
      best = n;
      break;
    }
    if (more !== undefined && placement(truncateText(more(n - k), limits.maxItemChars)) !== null) best = k;
    const item = safe[k];
    if (k === limit || item === undefined || !place(item)) break;
  }
  if (more === undefined || best === k) {
    if (more !== undefined && k < n) place(truncateText(more(n - k), limits.maxItemChars));
    return { chunks, included: k };
  }

  // Back off to `best` items, then add the "+N more" item.
  chunks.length = 0;
  lastLen = 0;
  total = 0;
  for (const item of safe.slice(0, best)) place(item);
  place(truncateText(more(n - best), limits.maxItemChars));
  return { chunks, included: best };
}

function mrkdwn(text: string): MrkdwnElement {
  return { type: 'mrkdwn', text, verbatim: true };
}

function section(text: string): SectionBlock {
  return { type: 'section', text: mrkdwn(text) };
}

function divider(): DividerBlock {
  return { type: 'divider' };
}

function context(text: string): ContextBlock {
  return { type: 'context', elements: [mrkdwn(truncateText(text, SLACK_LIMITS.textObject))] };
}

function header(text: string): HeaderBlock {
  return { type: 'header', text: { type: 'plain_text', text: truncateText(text, SLACK_LIMITS.headerText) } };
}

interface ListOptions {
  maxBlocks: number;
  maxChars: number;
  more?: ((hidden: number) => string) | undefined;
  maxItems?: number | undefined;
}

/**
 * A titled list as section blocks: `head` is the first line of the first block, then `lines`, split
 * across blocks as needed. `included` counts the lines shown (the head excluded).
 */
function listSections(head: string, lines: readonly string[], options: ListOptions): { blocks: SectionBlock[]; included: number } {
  const { more } = options;
  const packed = pack(
    [head, ...lines],
    {
      maxChunks: options.maxBlocks,
      maxTotal: options.maxChars,
      maxChunkChars: SLACK_LIMITS.sectionText,
      maxChunkItems: Number.POSITIVE_INFINITY,
      maxItemChars: SLACK_LIMITS.sectionText,
      joiner: '\n',
      maxItems: options.maxItems === undefined ? undefined : options.maxItems + 1,
    },
    more,
  );
  return { blocks: packed.chunks.map((chunk) => section(chunk.join('\n'))), included: Math.max(0, packed.included - 1) };
}

function nonNegativeInt(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : fallback;
}

// ---------------------------------------------------------------------------------------------
// The digest

function metricFields(input: DigestInput, deltas: ReadonlyMap<string, number | null>): SectionBlock[] {
  const seen = new Set<string>();
  const fields: string[] = [];
  for (const metric of input.overview.metrics) {
    const first = !seen.has(metric.label);
    seen.add(metric.label);
    const label = inline(metric.label, LEN.label);
    const delta = first ? formatDelta(deltas.get(metric.label)) : null;
    const caption = metric.caption === null ? '' : inline(metric.caption, LEN.caption);
    fields.push(
      `*${label.length > 0 ? label : '—'}*\n${formatScalar(metric.value, LEN.value)}${delta !== null ? ` (${delta})` : ''}${caption.length > 0 ? `\n${caption}` : ''}`,
    );
  }
  if (fields.length === 0) return [section('*Headline metrics*\nNo headline metrics in this run.')];
  const packed = pack(
    fields,
    {
      maxChunks: MAIN.metrics.blocks,
      maxTotal: MAIN.metrics.chars,
      maxChunkChars: Number.POSITIVE_INFINITY,
      maxChunkItems: SLACK_LIMITS.sectionFields,
      maxItemChars: SLACK_LIMITS.sectionFieldText,
      joiner: '',
    },
    (hidden) => `+${plural(hidden, 'more metric', 'more metrics')}`,
  );
  return packed.chunks.map((chunk) => ({ type: 'section', fields: chunk.map((text) => mrkdwn(text)) }));
}

function metricSummary(input: DigestInput, deltas: ReadonlyMap<string, number | null>): string {
  const parts = input.overview.metrics.slice(0, 3).map((metric) => {
    const delta = formatDelta(deltas.get(metric.label));
    return `${inline(metric.label, LEN.label)} ${formatScalar(metric.value, LEN.value)}${delta !== null ? ` (${delta})` : ''}`;
  });
  return parts.length > 0 ? parts.join('; ') : 'no headline metrics';
}

export function renderDigest(input: DigestInput): RenderedDigest {
  const topGaps = nonNegativeInt(input.options?.topGaps, DEFAULT_TOP_GAPS);
  const reasoningGaps = nonNegativeInt(input.options?.reasoningGaps, DEFAULT_REASONING_GAPS);
  const maxGapReplies = nonNegativeInt(input.options?.maxGapReplies, DEFAULT_MAX_GAP_REPLIES);
  const diff = diffSnapshots(input.previous, { overview: input.overview, gaps: input.gaps });
  const name = projectName(input.project, input.project.id);
  const gaps = input.gaps;

  // Main message ------------------------------------------------------------------------------
  const blocks: KnownBlock[] = [header(`Visibility digest: ${name}`)];
  blocks.push(...metricFields(input, diff.metricDeltas));
  blocks.push(divider());

  const engineLines = input.overview.engines.map(rowLine);
  blocks.push(
    ...listSections('*AI engines*', engineLines.length > 0 ? engineLines : ['No per-engine rows in this run.'], {
      maxBlocks: MAIN.engines.blocks,
      maxChars: MAIN.engines.chars,
      more: (hidden) => `+${plural(hidden, 'more engine', 'more engines')}`,
    }).blocks,
  );
  const alertLines = input.overview.alerts.map(rowLine);
  blocks.push(
    ...listSections(`*Alerts*${alertLines.length > 0 ? ` (${formatNumber(alertLines.length)})` : ''}`, alertLines.length > 0 ? alertLines : ['No alerts.'], {
      maxBlocks: MAIN.alerts.blocks,
      maxChars: MAIN.alerts.chars,
      more: (hidden) => `+${plural(hidden, 'more alert', 'more alerts')}`,
    }).blocks,
  );
  blocks.push(divider());

  let shownInMain = 0;
  if (gaps.length === 0) {
    blocks.push(section("*Worst gaps*\nNo gaps — the project isn't losing any tracked question in this run."));
  } else {
    const gapsList = listSections(
      `*Worst gaps* (${formatNumber(gaps.length)})`,
      gaps.map((gap, i) => gapLine(gap, `${i + 1}. `)),
      {
        maxBlocks: MAIN.gaps.blocks,
        maxChars: MAIN.gaps.chars,
        maxItems: topGaps,
        more: (hidden) => `+${plural(hidden, 'more gap', 'more gaps')}${maxGapReplies > 0 ? ' in the thread' : ''}`,
      },
    );
    shownInMain = gapsList.included;
    blocks.push(...gapsList.blocks);
  }

  const showChanges = !diff.firstDigest && (diff.newGaps.length > 0 || diff.resolvedGaps.length > 0);
  if (input.previous === null) {
    blocks.push(section('*Since the last digest*\nFirst digest for this project: changes will be shown from the next run on.'));
  } else {
    const since = `*Since the last digest* (${formatEventTime(input.previous.lastCreatedAt)})`;
    const counts = showChanges
      ? `${plural(diff.newGaps.length, 'new gap', 'new gaps')} · ${formatNumber(diff.resolvedGaps.length)} resolved — lists in the thread`
      : 'No new or resolved gaps.';
    blocks.push(section(`${since}\n${counts}`));
  }

  const contextParts = [`Run ${inline(input.run.runId, LEN.id) || '—'}`];
  if (input.run.answers !== null && Number.isFinite(input.run.answers)) contextParts.push(plural(input.run.answers, 'answer', 'answers'));
  contextParts.push(formatEventTime(input.run.createdAt));
  blocks.push(context(contextParts.join(' · ')));

  const gapCount = gaps.length === 0 ? 'no gaps' : plural(gaps.length, 'gap', 'gaps');
  const main: BlockKitMessage = {
    text: truncateText(`Visibility digest for ${name}: ${metricSummary(input, diff.metricDeltas)} · ${gapCount}`, SLACK_LIMITS.fallbackText),
    blocks,
  };

  // Thread replies ----------------------------------------------------------------------------
  const thread: BlockKitMessage[] = [];
  const replyBudget = { maxBlocks: SLACK_LIMITS.blocksPerMessage, maxChars: MESSAGE_TEXT_BUDGET };

  // 1. The gaps beyond the main message.
  let next = shownInMain;
  for (let reply = 0; reply < maxGapReplies && next < gaps.length; reply += 1) {
    const total = formatNumber(gaps.length);
    const headFor = (from: string, to: string): string => `*More gaps* (${from}–${to} of ${total})`;
    const lastReply = reply === maxGapReplies - 1;
    const list = listSections(
      headFor(total, total), // widest head, replaced below once the range is known
      gaps.slice(next).map((gap, i) => gapLine(gap, `${next + i + 1}. `)),
      { ...replyBudget, more: lastReply ? (hidden) => `+${plural(hidden, 'more gap', 'more gaps')} not shown` : undefined },
    );
    if (list.included === 0 && !lastReply) break;
    const from = formatNumber(next + 1);
    const to = formatNumber(next + list.included);
    const first = list.blocks[0];
    const head = headFor(from, to);
    if (first?.text !== undefined) first.text.text = first.text.text.replace(headFor(total, total), head);
    thread.push({ text: `More gaps for ${name} (${from}–${to} of ${total})`, blocks: list.blocks });
    next += list.included;
    if (list.included === 0) break;
  }

  // 2. New and resolved gaps.
  if (showChanges) {
    const changeBudget = { maxBlocks: 24, maxChars: 4_400 };
    const newList = listSections(
      `*New gaps since the last digest* (${formatNumber(diff.newGaps.length)})`,
      diff.newGaps.length > 0 ? diff.newGaps.map((gap) => gapLine(gap, '• ')) : ['None.'],
      { ...changeBudget, more: (hidden) => `+${plural(hidden, 'more new gap', 'more new gaps')}` },
    );
    const resolvedList = listSections(
      `*Resolved since the last digest* (${formatNumber(diff.resolvedGaps.length)})`,
      diff.resolvedGaps.length > 0 ? diff.resolvedGaps.map(resolvedLine) : ['None.'],
      { ...changeBudget, more: (hidden) => `+${plural(hidden, 'more resolved gap', 'more resolved gaps')}` },
    );
    thread.push({
      text: `Gap changes for ${name}: ${formatNumber(diff.newGaps.length)} new, ${formatNumber(diff.resolvedGaps.length)} resolved`,
      blocks: [...newList.blocks, divider(), ...resolvedList.blocks],
    });
  }

  // 3. Reasoning cards of the top gaps: one reply per card, or several cards per reply when they fit.
  const cards = gaps.slice(0, reasoningGaps).map((gap, i) => {
    const card = input.reasoning.get(gap.prompt_id) ?? null;
    let lines: string[];
    if (card === null) lines = ['No reasoning card for this gap.'];
    else if (card.reasons.length === 0) lines = ['The reasoning card lists no reasons.'];
    else lines = card.reasons.map(reasonLine);
    const count = card !== null && card.reasons.length > 0 ? ` (${plural(card.reasons.length, 'reason', 'reasons')})` : '';
    const list = listSections(`*Why gap ${i + 1} is lost:* ${gapTitle(gap.prompt_ref, gap.prompt_text, 200)}${count}`, lines, {
      ...replyBudget,
      more: (hidden) => `+${plural(hidden, 'more reason', 'more reasons')}`,
    });
    return { rank: i + 1, blocks: list.blocks };
  });
  let group: { first: number; last: number; blocks: KnownBlock[] } | null = null;
  const flush = (): void => {
    if (group === null) return;
    const ranks = group.first === group.last ? `gap ${group.first}` : `gaps ${group.first}–${group.last}`;
    thread.push({ text: `Reasoning for ${ranks} of ${name}`, blocks: group.blocks });
    group = null;
  };
  for (const card of cards) {
    if (group !== null) {
      const merged: KnownBlock[] = [...group.blocks, divider(), ...card.blocks];
      if (merged.length <= SLACK_LIMITS.blocksPerMessage && blocksTextLength(merged) <= MESSAGE_TEXT_BUDGET) {
        group = { first: group.first, last: card.rank, blocks: merged };
        continue;
      }
      flush();
    }
    group = { first: card.rank, last: card.rank, blocks: card.blocks };
  }
  flush();

  return { main, thread };
}

// ---------------------------------------------------------------------------------------------
// draft.ready

/** A value of a type the spec does not fix (draft version): scalars as usual, objects as short JSON. */
function formatUnknown(value: unknown): string {
  if (value === undefined) return '—';
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return formatScalar(value, LEN.version);
  }
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'object') {
    try {
      const json = JSON.stringify(value);
      return typeof json === 'string' ? inline(json, LEN.version) : '—';
    } catch {
      return '—';
    }
  }
  return '—';
}

export function renderDraftReady(input: {
  project: Project | null;
  projectId: string;
  assetId: string;
  version: unknown;
  createdAt: string;
}): BlockKitMessage {
  const name = projectName(input.project, input.projectId);
  const asset = inline(input.assetId, LEN.id) || '—';
  const version = formatUnknown(input.version);
  const contextParts: string[] = [];
  if (input.project !== null && inline(input.project.name, LEN.projectName).length > 0) contextParts.push(`Project ${inline(input.projectId, LEN.id)}`);
  contextParts.push(formatEventTime(input.createdAt));
  return {
    text: truncateText(`Draft ready for ${name}: asset ${asset}, version ${version}`, SLACK_LIMITS.fallbackText),
    blocks: [
      section(`:memo: *Draft ready* for *${name}*`),
      { type: 'section', fields: [mrkdwn(`*Asset*\n${asset}`), mrkdwn(`*Version*\n${version}`)] },
      context(contextParts.join(' · ')),
    ],
  };
}
