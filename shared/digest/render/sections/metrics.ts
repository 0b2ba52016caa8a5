/** Headline metrics: the ones that moved as fields (change, sparkline, vs last week), the rest on one line. */
import type { SectionBlock } from '@slack/web-api';
import type { Metric } from '../../../read-api-types';
import { changeTone } from '../../metric-direction';
import { fieldsSection, section } from '../blocks';
import { formatScalar, formatSigned, inline, LEN, sparkline } from '../format';
import type { DigestModel } from '../model';
import { SLACK_LIMITS } from '../../../slack-text';

/** Fields in the main message (two section blocks); the rest go to the thread. */
export const MAIN_METRIC_FIELDS = 2 * SLACK_LIMITS.sectionFields;

const TONE_MARK = { better: '▲ better', worse: '▼ worse', same: '' } as const;

function firstOfEachLabel(metrics: readonly Metric[]): Metric[] {
  const seen = new Set<string>();
  return metrics.filter((m) => !seen.has(m.label) && seen.add(m.label) !== undefined);
}

function isUnchanged(model: DigestModel, metric: Metric): boolean {
  const delta = model.diff.metricDeltas.get(metric.label);
  return !model.diff.firstDigest && delta !== null && delta !== undefined && Math.abs(delta) <= model.threshold;
}

function changeText(model: DigestModel, label: string): string {
  const delta = model.diff.metricDeltas.get(label);
  const signed = formatSigned(delta);
  if (signed === null) return '';
  const tone = changeTone(label, delta, model.directions);
  return ` (${signed}${tone !== null && tone !== 'same' ? ` ${TONE_MARK[tone]}` : ''})`;
}

/** One metric as a field: label, value, change, sparkline, vs last week. */
export function metricField(model: DigestModel, metric: Metric): string {
  const label = inline(metric.label, LEN.label) || '—';
  const spark = sparkline(model.diff.series.get(metric.label) ?? []);
  const week = formatSigned(model.diff.weekDeltas.get(metric.label));
  const lines = [`*${label}*`, `${formatScalar(metric.value, LEN.value)}${changeText(model, metric.label)}`];
  if (spark.length > 0) lines.push(spark);
  if (week !== null) lines.push(`vs last week ${week}`);
  return lines.join('\n');
}

export function metricFieldsAll(model: DigestModel): { moved: string[]; unchanged: string[] } {
  const metrics = firstOfEachLabel(model.input.overview.metrics);
  return {
    moved: metrics.filter((m) => !isUnchanged(model, m)).map((m) => metricField(model, m)),
    unchanged: metrics
      .filter((m) => isUnchanged(model, m))
      .map((m) => `${inline(m.label, LEN.label) || '—'} ${formatScalar(m.value, LEN.value)}`),
  };
}

/** The main message's metric blocks; `overflow` fields go to the thread. */
export function metricsSection(model: DigestModel): { blocks: SectionBlock[]; overflow: string[] } {
  const { moved, unchanged } = metricFieldsAll(model);
  if (moved.length + unchanged.length === 0)
    return { blocks: [section('*Headline metrics*\nNo headline metrics in this run.')], overflow: [] };
  const blocks: SectionBlock[] = [];
  const shown = moved.slice(0, MAIN_METRIC_FIELDS);
  for (let i = 0; i < shown.length; i += SLACK_LIMITS.sectionFields)
    blocks.push(fieldsSection(shown.slice(i, i + SLACK_LIMITS.sectionFields)));
  if (unchanged.length > 0) blocks.push(section(`_Unchanged:_ ${unchanged.join(' · ')}`));
  const overflow = moved.slice(MAIN_METRIC_FIELDS);
  if (overflow.length > 0) blocks.push(section(`+${overflow.length} more metrics in the thread`));
  return { blocks, overflow };
}

/** Metric captions, for a thread reply ("About these figures"). */
export function captionLines(model: DigestModel): string[] {
  return firstOfEachLabel(model.input.overview.metrics).flatMap((m) => {
    const caption = m.caption === null ? '' : inline(m.caption, LEN.caption);
    return caption.length > 0 ? [`• *${inline(m.label, LEN.label) || '—'}*: ${caption}`] : [];
  });
}
