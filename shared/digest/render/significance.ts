/**
 * The verdict (../verdict) as the digest says it: the run's called changes, each with its tone, its
 * strength (|z|) and a phrase, and the mark they add up to. Nothing here decides whether a change is
 * real — only how a called one reads; a figure the verdict did not call never appears here
 * (docs/DIGEST.md, "The mark and the headline").
 */
import type { RunMark, SnapshotGap } from '../../ports';
import type { Gap } from '../../read-api-types';
import { orderReasonsByImpact } from '../reasoning-choice';
import { inline, LEN, plural, sparkline } from './format';
import { engineTotal, type ComparedFigure, type DigestModel, type EngineView, type MetricView } from './model';
import { deltaText, valueText } from './units';
import { enginesText, enginesWhere, gapRef } from './sections/gap-line';

/** ⚠️ the run measured too little to judge; ⚪ nothing called; 🔴 / 🟢 only bad / good news; 🟡 both. */
export type StatusMark = RunMark;

export interface ChangeItem {
  tone: 'better' | 'worse';
  /** Strength of the evidence (|z|): the headline and the main message list the strongest first. */
  strength: number;
  /** A few words for the headline ("Visibility score −10.2 pts", "TrailForge took 3 prompts"). */
  phrase: string;
  /** The change as a line (mrkdwn). */
  line: string;
  /** The gaps it is about: the first with a reasoning card gives its reason. */
  gaps: Gap[];
  /** Why, when it is not in a reasoning card (e.g. the engines behind the lead metric). */
  cause?: string | undefined;
}

/** A z this large is certain enough: beyond it, strength does not order changes any further. */
const MAX_STRENGTH = 40;

function label(view: { label: string }): string {
  return inline(view.label, LEN.label) || '—';
}

function engineName(engine: EngineView): string {
  return inline(engine.name ?? '', LEN.rowName) || '(unnamed engine)';
}

function strengthOf(figure: ComparedFigure): number {
  return Math.min(MAX_STRENGTH, Math.abs(figure.call?.z ?? 0));
}

/** "−4.2 pts over 3 runs" / "+130": a called change as a change from the figure's usual level. */
export function calledChangeText(figure: ComparedFigure): string {
  const change = deltaText(figure.reading, figure.call?.change ?? null) ?? '';
  const runs = figure.call?.evidence === 'persistent' && figure.call.runs > 1 ? ` over ${figure.call.runs} runs` : '';
  return `${change}${runs}`;
}

/** "50.5 % (−3.2 pts)", "3.6, was 3.1" — a called metric's value with its change from its usual level. */
function metricValueWithChange(view: MetricView): string {
  const value = valueText(view.reading, view.value, view.raw);
  const change = view.call?.change ?? null;
  if (change === null || view.value === null) return value;
  const runs = view.call?.evidence === 'persistent' && (view.call.runs ?? 0) > 1 ? ` over ${view.call.runs} runs` : '';
  if (view.reading.kind === 'position') return `${value}, was ${valueText(view.reading, view.value - change, null)}${runs}`;
  return `${value} (${calledChangeText(view)})`;
}

/** A called metric as a line: the change, better or worse in words where the sign does not say, the week. */
function metricChangeLine(view: MetricView): string {
  const tone = view.reading.kind !== 'share' && (view.tone === 'better' || view.tone === 'worse') ? ` — ${view.tone}` : '';
  const week =
    view.weekDelta !== null && view.weekDelta !== 0 && view.weekDelta !== view.delta
      ? ` · vs last week ${deltaText(view.reading, view.weekDelta) ?? ''}`
      : '';
  const spark = sparkline(view.series);
  return `*${label(view)}* ${metricValueWithChange(view)}${tone}${week}${spark.length > 0 ? ` ${spark}` : ''}`;
}

/** Where the lead metric's move comes from, without claiming any engine's figure: "lower on 4 of 5 engines". */
function engineCause(model: DigestModel, view: MetricView): string | undefined {
  const change = view.call?.change ?? null;
  if (view.reading.kind !== 'share' || change === null || change === 0) return undefined;
  const judged = model.engines.filter((e) => e.call !== null && e.call.change !== null);
  if (judged.length < 2) return undefined;
  const same = judged.filter((e) => Math.sign(e.call?.change ?? 0) === Math.sign(change));
  if (same.length === 0) return undefined;
  const where = same.length === judged.length ? `on all ${judged.length} engines` : `on ${same.length} of ${judged.length} engines`;
  return `${change < 0 ? 'lower' : 'higher'} ${where}`;
}

function isGapCount(view: MetricView): boolean {
  return /\bgaps?\b/i.test(view.label.replace(/_/g, ' '));
}

function metricItems(model: DigestModel, gapNews: boolean): ChangeItem[] {
  return model.metrics
    .filter((v) => v.significant && (v.tone === 'better' || v.tone === 'worse') && !(gapNews && isGapCount(v)))
    .map((v) => {
      const change = v.call?.change ?? 0;
      const phrase =
        v.reading.kind === 'position' && v.value !== null
          ? `${label(v)} ${valueText(v.reading, v.value - change, null)} → ${valueText(v.reading, v.value, v.raw)}`
          : `${label(v)} ${calledChangeText(v)}`;
      return {
        tone: v.tone as 'better' | 'worse',
        strength: strengthOf(v) * (v.lead ? 1.5 : 1),
        phrase,
        line: metricChangeLine(v),
        gaps: [],
        cause: v.lead ? engineCause(model, v) : undefined,
      };
    });
}

/** An engine's called change with its unit: "Gemini −12.1 pts", "Copilot +3 mentions". */
function engineChange(engine: EngineView): string {
  const change = calledChangeText(engine);
  const unit = engine.reading.kind === 'share' || engine.field === null ? '' : ` ${inline(engine.field.replace(/_/g, ' '), LEN.fieldName)}`;
  return `${engineName(engine)} ${change}${unit}`;
}

function engineItems(model: DigestModel): ChangeItem[] {
  const { down, up, compared } = enginesMoved(model);
  const item = (engines: EngineView[], tone: 'better' | 'worse'): ChangeItem[] => {
    const [only] = engines;
    if (only === undefined) return [];
    const word = tone === 'worse' ? 'down' : 'up';
    const phrase = engines.length === 1 ? engineChange(only) : `${engines.length} of ${compared} engines ${word}`;
    const shown = engines.slice(0, 4).map(engineChange).join(', ') + (engines.length > 4 ? ` and ${engines.length - 4} more` : '');
    return [
      {
        tone,
        strength: Math.max(...engines.map(strengthOf)),
        phrase,
        line: `*${phrase}*${engines.length > 1 ? `: ${shown}` : ''}`,
        gaps: [],
      },
    ];
  };
  return [...item(down, 'worse'), ...item(up, 'better')];
}

/** Engines the verdict called, by direction, and how many were judged. */
export function enginesMoved(model: DigestModel): { down: EngineView[]; up: EngineView[]; compared: number } {
  const judged = model.engines.filter((e) => e.call !== null && e.call.call !== 'unjudged');
  return {
    down: judged.filter((e) => e.significant && e.tone === 'worse'),
    up: judged.filter((e) => e.significant && e.tone === 'better'),
    compared: judged.length,
  };
}

function gapMentions(model: DigestModel, gaps: readonly SnapshotGap[], note: (gap: SnapshotGap) => string): string {
  const shown = gaps.slice(0, 2).map((g) => `${gapRef(model, g, 80)}${note(g)}`);
  return shown.join('; ') + (gaps.length > 2 ? ` and ${gaps.length - 2} more` : '');
}

/** Prompts a rival took (new gaps it wins, or prompts it won from another rival), per rival the verdict called. */
function takeItems(model: DigestModel): ChangeItem[] {
  return (model.gapNews?.takes ?? []).flatMap((take): ChangeItem[] => {
    const call = model.verdict.takes.get(take.rival);
    if (!call?.called) return [];
    const name = inline(take.rival, LEN.competitor);
    const note = (g: SnapshotGap): string => {
      const from = model.shifts.get(g.prompt_id)?.previousWinner;
      if (from) return ` (from ${inline(from, LEN.competitor)})`;
      const engines = enginesWhere(model, g.platforms_losing ?? []);
      return engines.length > 0 ? ` (new, on ${engines})` : ' (new)';
    };
    const phrase =
      name.length > 0 ? `${name} took ${plural(take.gaps.length, 'prompt', 'prompts')}` : plural(take.gaps.length, 'new gap', 'new gaps');
    const line = `*${phrase}*: ${gapMentions(model, take.gaps, note)}`;
    return [{ tone: 'worse', strength: Math.min(MAX_STRENGTH, call.z), phrase, line, gaps: take.gaps }];
  });
}

/** "now also lost on Gemini, Claude (4/5 engines)" for a gap that spread to more engines. */
export function spreadNote(model: DigestModel, gap: Gap): string {
  const added = model.shifts.get(gap.prompt_id)?.newEngines ?? [];
  if (added.length === 0) return '';
  return ` — now also lost on ${enginesText(added)} (${gap.platforms_losing.length}/${engineTotal(model)} engines)`;
}

function worseItems(model: DigestModel): ChangeItem[] {
  const news = model.gapNews?.worse;
  const call = model.verdict.worse;
  if (news === undefined || !call?.called) return [];
  const phrase = `${plural(news.gaps.length, 'gap', 'gaps')} worse`;
  const note = (g: SnapshotGap): string => spreadNote(model, g as Gap) || ' (the service marks it worse)';
  return [
    {
      tone: 'worse',
      strength: Math.min(MAX_STRENGTH, call.z),
      phrase,
      line: `*${phrase}*: ${gapMentions(model, news.gaps, note)}`,
      gaps: news.gaps,
    },
  ];
}

function resolvedItems(model: DigestModel): ChangeItem[] {
  const news = model.gapNews?.resolved;
  const call = model.verdict.resolved;
  if (news === undefined || !call?.called) return [];
  const phrase = `${plural(news.gaps.length, 'gap', 'gaps')} resolved`;
  return [
    {
      tone: 'better',
      strength: Math.min(MAX_STRENGTH, call.z),
      phrase,
      line: `*${phrase}*: ${gapMentions(model, news.gaps, () => '')}`,
      gaps: [],
    },
  ];
}

/**
 * Every called change of the run, strongest first — but with news both ways, the strongest of each side
 * leads, so the headline names both. Empty on a first digest and a data-quality run.
 */
export function significantChanges(model: DigestModel): ChangeItem[] {
  if (model.diff.firstDigest || model.emptyReason !== null) return [];
  const gapNews = [...takeItems(model), ...worseItems(model), ...resolvedItems(model)];
  const all = [...metricItems(model, gapNews.length > 0), ...engineItems(model), ...gapNews].sort((a, b) => b.strength - a.strength);
  const worst = all.find((c) => c.tone === 'worse');
  const best = all.find((c) => c.tone === 'better');
  if (worst === undefined || best === undefined) return all;
  return [worst, best, ...all.filter((c) => c !== worst && c !== best)];
}

/** The mark the called changes add up to: one direction gives its colour, both give 🟡. */
export function statusMark(model: DigestModel, changes: readonly ChangeItem[]): StatusMark {
  if (model.emptyReason !== null) return '⚠️';
  const worse = changes.some((c) => c.tone === 'worse');
  const better = changes.some((c) => c.tone === 'better');
  if (worse && better) return '🟡';
  if (worse) return '🔴';
  return better ? '🟢' : '⚪';
}

/** The top reason of the first of the change's gaps that has a reasoning card with reasons. */
export function topReason(model: DigestModel, item: ChangeItem): string | null {
  for (const gap of item.gaps) {
    const card = model.input.reasoning.get(gap.prompt_id);
    const reason = card ? orderReasonsByImpact(card.reasons)[0] : undefined;
    const detail = reason ? inline(reason.detail, 160) : '';
    if (detail.length > 0) return detail;
  }
  return null;
}

export interface Assessment {
  changes: ChangeItem[];
  mark: StatusMark;
}

const ASSESSED = new WeakMap<DigestModel, Assessment>();

/** The model's called changes and mark, worked out once per model. */
export function assess(model: DigestModel): Assessment {
  const known = ASSESSED.get(model);
  if (known) return known;
  const changes = significantChanges(model);
  const assessment = { changes, mark: model.diff.firstDigest ? '⚪' : statusMark(model, changes) } satisfies Assessment;
  ASSESSED.set(model, assessment);
  return assessment;
}

/**
 * A run with nothing to tell: not the first digest, judged, and no change called.
 * With digestMode 'changes' such a run posts one compact line.
 */
export function isQuietRun(model: DigestModel): boolean {
  return !model.diff.firstDigest && model.emptyReason === null && assess(model).changes.length === 0;
}

/** The figures (metrics, then engines) that moved since the last run but that the verdict did not call, largest first. */
export function withinNoise(model: DigestModel): { name: string; figure: ComparedFigure }[] {
  const metrics = model.metrics.map((m) => ({ name: label(m), figure: m }));
  const engines = model.engines.filter((e) => e.name !== null).map((e) => ({ name: engineName(e), figure: e }));
  return [...metrics, ...engines]
    .filter(({ figure }) => figure.call?.call === 'steady' && figure.delta !== null && figure.delta !== 0)
    .sort((a, b) => strengthOf(b.figure) - strengthOf(a.figure));
}

/** Gap news the verdict did not call (within the project's usual churn), as counts: "2 new gaps, 1 resolved". */
export function usualChurnText(model: DigestModel): string | null {
  const news = model.gapNews;
  if (news === null || model.emptyReason !== null) return null;
  const taken = news.takes.filter((t) => !model.verdict.takes.get(t.rival)?.called).reduce((n, t) => n + t.gaps.length, 0);
  const worse = model.verdict.worse?.called ? 0 : news.worse.gaps.length;
  const resolved = model.verdict.resolved?.called ? 0 : news.resolved.gaps.length;
  const parts = [
    taken > 0 ? plural(taken, 'prompt lost', 'prompts lost') : '',
    worse > 0 ? plural(worse, 'gap worse', 'gaps worse') : '',
    resolved > 0 ? plural(resolved, 'gap resolved', 'gaps resolved') : '',
  ].filter((p) => p.length > 0);
  return parts.length > 0 ? parts.join(', ') : null;
}
