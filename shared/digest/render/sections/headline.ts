/** The headline: status mark, project (linked), the two or three biggest changes. Also the notification text. */
import { changeTone } from '../../metric-direction';
import { mrkdwnLink } from '../../links';
import { formatScalar, formatSigned, inline, LEN, plural } from '../format';
import { movedMetrics, type DigestModel } from '../model';

export type StatusMark = '🔴' | '🟡' | '🟢' | '⚪';

/** Red: a critical/error alert, or more bad news than good; amber: some bad news or a warning; green otherwise. */
export function statusMark(model: DigestModel): StatusMark {
  if (model.emptyReason !== null) return '⚪';
  const moved = movedMetrics(model);
  const engineWorse = [...model.diff.engineDeltas].filter(
    ([, d]) => changeTone('visibility', d) === 'worse' && Math.abs(d) > model.threshold,
  ).length;
  const bad =
    moved.filter((m) => m.tone === 'worse').length +
    engineWorse +
    (model.diff.newGaps.length + model.diff.worseningGaps.length > 0 ? 1 : 0);
  const good = moved.filter((m) => m.tone === 'better').length + (model.diff.resolvedGaps.length > 0 ? 1 : 0);
  if (model.alerts.some((a) => a.severity === 'critical' || a.severity === 'error') || bad > good) return '🔴';
  if (bad > 0 || model.alerts.some((a) => a.severity === 'warning')) return '🟡';
  return '🟢';
}

/**
 * The biggest changes as short phrases: the headline metric (the overview's first) when it moved, new
 * gaps, then the other metric and engine moves by relative size. A gap-count metric is left out when
 * new gaps are already named (the same news twice).
 */
export function biggestChanges(model: DigestModel, max = 3): string[] {
  const values = new Map(model.input.overview.metrics.map((m) => [m.label, m.value] as const));
  const previous = model.input.previous;
  const moved = movedMetrics(model);
  const lead = moved.find((m) => m.label === model.input.overview.metrics[0]?.label);
  const newGaps = model.diff.newGaps.length;
  const metricText = (m: (typeof moved)[number]): string =>
    `${inline(m.label, LEN.label)} ${formatScalar(values.get(m.label) ?? null)} (${formatSigned(m.delta) ?? ''})`;
  const moves = moved
    .filter((m) => m !== lead && !(newGaps > 0 && /\bgaps?\b/i.test(m.label)))
    .map((m) => ({ size: Math.abs(m.delta) / Math.max(1, Math.abs(Number(previous?.metrics[m.label] ?? 1))), text: metricText(m) }));
  const engines = [...model.diff.engineDeltas]
    .filter(([, delta]) => Math.abs(delta) > model.threshold)
    .map(([engine, delta]) => ({
      size: Math.abs(delta) / Math.max(1, Math.abs(previous?.engines?.[engine] ?? 1)),
      text: `${inline(engine, LEN.rowName)} ${formatSigned(delta) ?? ''}`,
    }));
  const phrases = [
    ...(lead === undefined ? [] : [metricText(lead)]),
    ...(newGaps > 0 ? [plural(newGaps, 'new gap', 'new gaps')] : []),
    ...[...moves, ...engines].sort((a, b) => b.size - a.size).map((m) => m.text),
  ];
  return phrases.slice(0, max);
}

function emptyPhrase(model: DigestModel): string | null {
  if (model.emptyReason === 'status') return `run status: ${inline(model.input.run.status ?? '', LEN.status)}`;
  if (model.emptyReason === 'no-answers') return 'no answers in this run';
  return null;
}

function headlineParts(model: DigestModel): string[] {
  const empty = emptyPhrase(model);
  if (empty !== null) return [empty];
  if (model.diff.firstDigest) return ['first digest'];
  const changes = biggestChanges(model);
  return changes.length > 0 ? changes : ['no notable changes'];
}

/** The headline line as mrkdwn (project bold, linked when there is a dashboard template). */
export function headlineText(model: DigestModel): string {
  return `${statusMark(model)} *${mrkdwnLink(model.projectUrl, model.name)}* — ${headlineParts(model).join(' · ')}`;
}

/** The headline as the message's notification text (no markup). */
export function headlineFallback(model: DigestModel): string {
  return `${statusMark(model)} ${model.name} — ${headlineParts(model).join(' · ')}`;
}
