/**
 * Pure rendering of the Slack digest (no I/O, no clock): a main message plus thread replies, and the
 * draft.ready notice. One function per section lives in render/sections/; this module composes them.
 *
 * Safety: every service string goes through `serviceText` (invisible and bidi characters removed, style
 * markers neutralised, `&`, `<`, `>` escaped, cut to a per-field length); mrkdwn is `verbatim`. The only
 * `<…>` markup emitted is the renderer's own dashboard links (https, from a validated template).
 *
 * Order: headline (also the notification text), what changed, metrics, alerts by severity, engines,
 * worst gaps, run context, "Open dashboard". Nothing is dropped: what does not fit goes to the thread.
 */
import type { KnownBlock } from '@slack/web-api';
import { SLACK_LIMITS, truncateText } from '../slack-text';
import { divider, repliesFor, section, type BlockKitMessage } from './render/blocks';
import { buildModel, gapCountText, isQuietRun, type DigestInput, type DigestModel } from './render/model';
import { changesSection } from './render/sections/changes';
import { footerBlocks } from './render/sections/footer';
import { gapLine } from './render/sections/gap-line';
import { headlineFallback, headlineText, statusMark } from './render/sections/headline';
import { mrkdwnLink } from './links';
import { alertsList, enginesList, worstGapsList, type MainList } from './render/sections/lists';
import { captionLines, metricsSection } from './render/sections/metrics';
import { reasoningReplies } from './render/sections/reasoning';

export type { BlockKitMessage } from './render/blocks';
export { MESSAGE_TEXT_BUDGET } from './render/blocks';
export type { DigestInput, DigestOptions } from './render/model';
export { buildModel, isQuietRun } from './render/model';
export { renderDraftReady, type DraftReadyInput } from './render/sections/draft';
export { formatEventTime, formatScalar, formatSigned } from './render/format';

export interface RenderedDigest {
  main: BlockKitMessage;
  /** Replies to post in the main message's thread, in order. May be empty. */
  thread: BlockKitMessage[];
  /** True when the run was quiet and rendered compactly (digestMode 'changes'). */
  quiet: boolean;
}

const DEFAULT_TOP_GAPS = 5;
const DEFAULT_REASONING_GAPS = 3;

function count(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : fallback;
}

/** The standing lists of the main message: what does not fit goes to the thread. */
type ListSection = 'gaps' | 'alerts' | 'engines' | 'metrics';

interface ListSpec {
  render(model: DigestModel): MainList;
  /** Its overflow's thread replies: the title of lines a–b (1-based) and the notification fallback. */
  reply: { title(a: number, b: number, model: DigestModel, overflow: number): string; fallback(name: string): string };
  /** A line as it reads in the thread, when not as in the message. */
  threadLine?: ((line: string) => string) | undefined;
}

/** Every list section; the thread shows their overflow in this order, after the changed and gone gaps. */
const LISTS: { readonly [L in ListSection]: ListSpec } = {
  gaps: {
    render: (model) => worstGapsList(model, count(model.input.options?.topGaps, DEFAULT_TOP_GAPS)),
    reply: {
      title: (a, b, model, overflow) => `*More gaps* (${a + model.gaps.length - overflow}–${b + model.gaps.length - overflow})`,
      fallback: (name) => `More gaps of ${name}`,
    },
  },
  alerts: {
    render: alertsList,
    reply: { title: (a, b) => `*More alerts* (${a}–${b}, most severe first)`, fallback: (name) => `More alerts of ${name}` },
  },
  engines: {
    render: enginesList,
    reply: { title: (a, b) => `*More AI engines* (${a}–${b})`, fallback: (name) => `More engines of ${name}` },
  },
  metrics: {
    render: metricsSection,
    reply: { title: (a, b) => `*More metrics* (${a}–${b})`, fallback: (name) => `More metrics of ${name}` },
    threadLine: (field) => field.replace(/\n/g, ' · '),
  },
};

const DIVIDER = 'divider';
/** The main message, top to bottom: a section renderer, a list section by name, or a divider. */
type MainSection = ((model: DigestModel) => KnownBlock[]) | ListSection | typeof DIVIDER;

const MAIN_SECTIONS: readonly MainSection[] = [
  (model) => [section(headlineText(model))],
  changesSection,
  DIVIDER,
  'metrics',
  DIVIDER,
  'alerts',
  'engines',
  DIVIDER,
  'gaps',
  footerBlocks,
];

type Overflow = Partial<Record<ListSection, string[]>>;

function mainParts(model: DigestModel): { blocks: KnownBlock[]; overflow: Overflow } {
  const blocks: KnownBlock[] = [];
  const overflow: Overflow = {};
  for (const part of MAIN_SECTIONS) {
    if (part === DIVIDER) blocks.push(divider());
    else if (typeof part === 'function') blocks.push(...part(model));
    else {
      const list = LISTS[part].render(model);
      blocks.push(...list.blocks);
      overflow[part] = list.overflow;
    }
  }
  return { blocks, overflow };
}

function overflowReplies(model: DigestModel, overflow: Overflow): BlockKitMessage[] {
  return (Object.keys(LISTS) as ListSection[]).flatMap((name) => {
    const { reply, threadLine } = LISTS[name];
    const lines = overflow[name] ?? [];
    return repliesFor(
      threadLine ? lines.map(threadLine) : lines,
      (a, b) => reply.title(a, b, model, lines.length),
      reply.fallback(model.name),
    );
  });
}

function changedGapsOverflow(model: DigestModel): string[] {
  const changed = [
    ...model.diff.newGaps.map((g) => gapLine(model, g, '• _New:_ ')),
    ...model.diff.worseningGaps.map((g) => gapLine(model, g, '• _Worse:_ ')),
  ];
  return changed.length > 3 ? changed : [];
}

function threadReplies(model: DigestModel, overflow: Overflow): BlockKitMessage[] {
  const name = model.name;
  const gone = [
    ...model.diff.resolvedGaps.map((g) => ({ g, tag: 'Resolved' })),
    ...model.diff.leftTopGaps.map((g) => ({ g, tag: 'Left the top list' })),
  ];
  const goneLines = gone.map(({ g, tag }) => gapLine(model, { ...g, platforms_losing: [], top_competitor: '', extra: [] }, `• _${tag}:_ `));
  const captions = captionLines(model);
  return [
    ...repliesFor(changedGapsOverflow(model), (a, b) => `*Changed gaps* (${a}–${b})`, `Changed gaps of ${name}`),
    ...repliesFor(goneLines, (a, b) => `*No longer in the list* (${a}–${b})`, `Gaps gone from the list of ${name}`),
    ...overflowReplies(model, overflow),
    ...repliesFor(captions, () => '*About these figures*', `About the figures of ${name}`),
    ...reasoningReplies(model, count(model.input.options?.reasoningGaps, DEFAULT_REASONING_GAPS)),
  ];
}

/** The compact one-line message of a quiet run (digestMode 'changes'). */
function quietMessage(model: DigestModel): BlockKitMessage {
  const text = `${statusMark(model)} *${mrkdwnLink(model.projectUrl, model.name)}* — no changes beyond ±${model.threshold} · ${gapCountText(model)} open gaps`;
  return { text: truncateText(headlineFallback(model), SLACK_LIMITS.fallbackText), blocks: [section(text)] };
}

export function renderDigest(input: DigestInput): RenderedDigest {
  const model = buildModel(input);
  if (input.options?.mode === 'changes' && isQuietRun(model)) return { main: quietMessage(model), thread: [], quiet: true };
  const parts = mainParts(model);
  const main: BlockKitMessage = { text: truncateText(headlineFallback(model), SLACK_LIMITS.fallbackText), blocks: parts.blocks };
  return { main, thread: threadReplies(model, parts.overflow), quiet: false };
}
