/**
 * Pure rendering of the Slack digest (no I/O, no clock): a main message plus thread replies, and the
 * draft.ready notice. One function per section lives in render/sections/; this module composes them.
 *
 * Safety: every service string goes through `serviceText` (invisible and bidi characters removed, style
 * markers neutralised, `&`, `<`, `>` escaped, cut to a per-field length); mrkdwn is `verbatim`. The only
 * `<…>` markup emitted is the renderer's own dashboard links (https, from a validated template) and date tokens.
 *
 * Short by construction (docs/DIGEST.md): the main message is a headline, up to three significant changes
 * with their reasons, one line of figures and the buttons; the thread holds at most three replies. A
 * baseline, an empty run and a quiet run are one message each.
 */
import type { ContextBlock, KnownBlock } from '@slack/web-api';
import { SLACK_LIMITS, truncateText } from '../../slack-text';
import { context, section, type BlockKitMessage, type DigestBlock, type DigestMessage } from './blocks';
import { buildModel, type DigestInput, type DigestModel } from './model';
import { changesSection } from './sections/changes';
import { figuresLine, noiseLine } from './sections/figures';
import { footerBlocks } from './sections/footer';
import { headlineFallback, headlinePhrase, headlineText, markOf, openGapsText, positionParts } from './sections/headline';
import { baselineNote, positionSection } from './sections/position';
import {
  changesAndGapsReply,
  enginesAndAlertsReply,
  fitReplies,
  packReply,
  reasoningReply,
  showsAbout,
  type ReplyDraft,
} from './sections/thread';
import { severeAlertsSection } from './sections/rows';
import { trendChart } from './sections/trend';
import type { RunMark, VerdictState } from '../../ports';
import { isQuietRun } from './significance';
import { mrkdwnLink } from '../links';

export type { BlockKitMessage, DigestBlock, DigestMessage } from './blocks';
export type { DigestInput } from './model';
export { buildModel } from './model';
export { isQuietRun } from './significance';
export { renderDraftReady } from './sections/draft';

export interface RenderedDigest {
  main: DigestMessage;
  /** Replies to post in the main message's thread, in order (at most `MAX_THREAD_REPLIES`). May be empty. */
  thread: DigestMessage[];
  /** True when the run was quiet and rendered as one compact line (digestMode 'changes'). */
  quiet: boolean;
  /** True when the thread shows "About these figures" (the caller records it: once per channel). */
  about: boolean;
}

/** What a run's digest is, by what there is to say. */
export type DigestShape = 'report' | 'baseline' | 'quiet' | 'compact' | 'empty';

type MainSection = (model: DigestModel) => DigestBlock[];
type ThreadReply = (model: DigestModel) => ReplyDraft | null;

export const MAX_THREAD_REPLIES = 3;
/** Blocks of the main message: a phone screen's worth (docs/DIGEST.md). */
export const MAIN_BLOCK_BUDGET = 8;
const DEFAULT_TOP_GAPS = 5;
const DEFAULT_REASONING_GAPS = 3;

function count(value: number | undefined, fallback: number): number {
  return value !== undefined && Number.isFinite(value) ? Math.max(0, Math.floor(value)) : fallback;
}

const headline: MainSection = (model) => [section(headlineText(model))];

/** The compact line of a quiet run in a 'changes' channel. */
const compactLine: MainSection = (model) => [
  section(`⚪ *${mrkdwnLink(model.projectUrl, model.name)}* — no change beyond normal variation · ${openGapsText(model)}`),
];

/** Why a data-quality run is not judged, in a sentence. */
const qualityNote: MainSection = (model) => [
  context(
    model.emptyReason === 'few-answers'
      ? 'Too few answers to compare: nothing in this run is judged, and it does not count towards later comparisons. The figures are as measured.'
      : 'Nothing was measured in this run: no figures to compare, no gaps to judge.',
  ),
];

/** The trend as Slack's own chart (./sections/trend.ts); none before a second run. */
const trend: MainSection = (model) => {
  const chart = trendChart(model);
  return chart === null ? [] : [chart.block];
};

/** Severe alerts in the main message, pointing to the thread when the shape lists alerts there. */
const alertsInThread: MainSection = (model) => severeAlertsSection(model, true);
const alertsNoThread: MainSection = (model) => severeAlertsSection(model, false);

/**
 * Every shape's main message, top to bottom, and its thread replies. A new shape fails `tsc` until it
 * has its entry; a new section goes into the shapes that show it. A main section that points to the
 * thread only appears in shapes whose thread has that reply.
 */
const SHAPES: { readonly [S in DigestShape]: { main: readonly MainSection[]; thread: readonly ThreadReply[] } } = {
  report: {
    main: [headline, alertsInThread, changesSection, noiseLine, figuresLine, trend, footerBlocks],
    thread: [
      changesAndGapsReply,
      enginesAndAlertsReply,
      (model) => reasoningReply(model, count(model.input.options?.reasoningGaps, DEFAULT_REASONING_GAPS)),
    ],
  },
  baseline: {
    main: [
      headline,
      alertsNoThread,
      (model) => positionSection(model, count(model.input.options?.topGaps, DEFAULT_TOP_GAPS)),
      () => [context(baselineNote())],
      figuresLine,
      footerBlocks,
    ],
    thread: [],
  },
  // The normal variation's bands are in the engines reply.
  quiet: { main: [headline, alertsInThread, noiseLine, figuresLine, trend, footerBlocks], thread: [enginesAndAlertsReply] },
  compact: { main: [compactLine], thread: [] },
  empty: { main: [headline, alertsNoThread, qualityNote, footerBlocks], thread: [] },
};

export function shapeOf(model: DigestModel): DigestShape {
  if (model.emptyReason !== null) return 'empty';
  if (model.diff.firstDigest) return 'baseline';
  if (isQuietRun(model)) return model.input.options?.mode === 'changes' ? 'compact' : 'quiet';
  return 'report';
}

export function renderDigest(input: DigestInput): RenderedDigest {
  return renderModel(buildModel(input));
}

/** A digest from its model (the digest builds each channel's model once: ./channel-views.ts). */
export function renderModel(model: DigestModel): RenderedDigest {
  const shape = shapeOf(model);
  const { main, thread } = SHAPES[shape];
  const blocks = withinBudget(main.flatMap((part) => part(model)));
  const drafts = thread.map((reply) => reply(model)).filter((d): d is ReplyDraft => d !== null);
  return {
    main: mainMessage(model, blocks),
    thread: fitReplies(drafts, MAX_THREAD_REPLIES).map((draft) => packReply(model, draft)),
    quiet: shape === 'compact',
    about: thread.includes(enginesAndAlertsReply) && showsAbout(model),
  };
}

/**
 * The main message: with a chart, its words follow the headline in the fallback text (notifications,
 * screen readers), and stand in its place in `fallbackBlocks`, sent if Slack refuses the chart.
 */
function mainMessage(model: DigestModel, blocks: DigestBlock[]): DigestMessage {
  const headline = digestHeadline(model);
  const chart = blocks.some((b) => b.type === 'data_visualization') ? trendChart(model) : null;
  if (chart === null) return { text: headline, blocks };
  const fallbackBlocks = blocks.map((b): KnownBlock => (b.type === 'data_visualization' ? context(`_Trend:_ ${chart.text}`) : b));
  return { text: truncateText(`${headline}\n${chart.text}`, SLACK_LIMITS.fallbackText), blocks, fallbackBlocks };
}

/**
 * The main message within `MAIN_BLOCK_BUDGET`: past it, neighbouring context lines (the figures and
 * the normal-variation line) share one context block, each its own element.
 */
function withinBudget(blocks: DigestBlock[]): DigestBlock[] {
  const out = [...blocks];
  for (let i = 0; out.length > MAIN_BLOCK_BUDGET && i < out.length - 1;) {
    const [a, b] = [out[i], out[i + 1]];
    const mergeable =
      a?.type === 'context' &&
      b?.type === 'context' &&
      a.block_id === undefined &&
      b.block_id === undefined &&
      a.elements.length + b.elements.length <= SLACK_LIMITS.contextElements;
    if (mergeable) {
      const merged: ContextBlock = { type: 'context', elements: [...a.elements, ...b.elements] };
      out.splice(i, 2, merged);
    } else i += 1;
  }
  return out;
}

/** The digest's plain-text headline (its fallback text): what a held digest is listed by in the catch-up. */
export function digestHeadline(model: DigestModel): string {
  return truncateText(headlineFallback(model), SLACK_LIMITS.fallbackText);
}

/** A stored headline's bound: `/visibility status` repeats it on one line. */
const STORED_HEADLINE_CHARS = 300;

/**
 * The verdict state to store after this run (unchanged by a data-quality run), whether the run was one,
 * and the mark and headline the digest gave it (`/visibility status` repeats them, never judging again).
 */
export function verdictOutcome(model: DigestModel): { state: VerdictState; lowData: boolean; mark: RunMark; headline: string } {
  return {
    state: model.verdict.next,
    lowData: model.emptyReason !== null,
    mark: markOf(model),
    headline: truncateText(headlinePhrase(model), STORED_HEADLINE_CHARS),
  };
}

/**
 * A project's current position from the same pieces as a baseline digest (for `/visibility status`):
 * headline with the position, who takes its prompts, its worst gaps, the figures. No buttons, no thread.
 */
export function renderStatus(input: Omit<DigestInput, 'previous'>): BlockKitMessage {
  const model = buildModel({ ...input, previous: null });
  const blocks = [
    section(`*${mrkdwnLink(model.projectUrl, model.name)}* — ${positionParts(model).join(' · ')}`),
    ...positionSection(model, count(input.options?.topGaps, DEFAULT_TOP_GAPS)),
    ...figuresLine(model),
  ];
  return { text: truncateText(`${model.name} — ${positionParts(model).join(' · ')}`, SLACK_LIMITS.fallbackText), blocks };
}
