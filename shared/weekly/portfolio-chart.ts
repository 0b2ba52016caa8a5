/**
 * The weekly report's portfolio chart: Slack's own line chart of each project's lead metric (its
 * visibility) pooled per week, as the weekly verdict pools it (./content.ts, `lead`), over the weeks
 * every drawn project has, at most `PORTFOLIO_WEEKS`. At most `CHART_BLOCK_LIMITS.series` projects: those
 * that moved most over the window (first to last week), the rest named as not shown in the words. Within
 * Slack's limits by construction; its words go into the message's fallback text and stand in its place if
 * Slack refuses the block.
 */
import { cleanName, formatChange, formatDay, formatFigure, legendNames } from '../charts/series';
import { readMetric } from '../digest/noise';
import { shownValue } from '../digest/render/units';
import { CHART_BLOCK_LIMITS } from '../slack-blocks/limits';
import type { DataVisualizationBlock } from '../slack-blocks/types';
import { serviceText, truncateText } from '../slack-text';
import type { ProjectWeek } from './content';

/** "to Nov 23" (UTC): the week's last day. */
function weekLabel(endMs: number): string {
  return `to ${formatDay(endMs - 1)}`;
}

interface Line {
  name: string;
  values: number[];
}

export interface PortfolioChart {
  block: DataVisualizationBlock;
  text: string;
}

/** The chart, or null when fewer than two weeks have a figure for any project. */
export function portfolioChart(weeks: readonly ProjectWeek[]): PortfolioChart | null {
  const withLead = weeks.filter((w) => w.lead !== undefined && w.lead.weeks.length >= 2);
  const label = withLead[0]?.lead?.label;
  if (label === undefined) return null;
  // One measure per chart: the projects whose lead metric is the first one's.
  const same = withLead.filter((w) => w.lead?.label === label);
  const shared = Math.min(...same.map((w) => w.lead!.weeks.length));
  const ends = same[0]!.lead!.weeks.slice(-shared).map((p) => p.endMs);
  const reading = readMetric(
    label,
    same.flatMap((w) => w.lead!.weeks.map((p) => p.value)),
  );
  const lines = same
    .map((w) => ({ week: w, values: w.lead!.weeks.filter((p) => ends.includes(p.endMs)).map((p) => shownValue(reading, p.value)) }))
    .filter((l) => l.values.length === ends.length && l.values.every(Number.isFinite))
    .sort((a, b) => movement(b.values) - movement(a.values) || (a.week.projectName < b.week.projectName ? -1 : 1));
  const shown = lines.slice(0, CHART_BLOCK_LIMITS.series);
  if (shown.length === 0 || ends.length < 2) return null;
  const names = legendNames(
    shown.map((l) => l.week.projectName),
    CHART_BLOCK_LIMITS.labelChars,
  );
  const drawn: Line[] = shown.map((l, i) => ({ name: names[i]!, values: l.values }));
  const categories = ends.map(weekLabel);
  const unit = reading.kind === 'share' ? '%' : '';
  const measure = truncateText(cleanName(label), 30);
  const block: DataVisualizationBlock = {
    type: 'data_visualization',
    block_id: 'bridge_portfolio_chart',
    title: truncateText(`${measure} by project, last ${ends.length} weeks`, CHART_BLOCK_LIMITS.titleChars),
    chart: {
      type: 'line',
      series: drawn.map((line) => ({ name: line.name, data: line.values.map((value, i) => ({ label: categories[i]!, value })) })),
      axis_config: {
        categories,
        x_label: 'Week (UTC)',
        y_label: truncateText(unit === '' ? measure : `${measure} (${unit})`, CHART_BLOCK_LIMITS.axisLabelChars),
      },
    },
  };
  const omitted = weeks.length - drawn.length;
  const each = drawn.map(
    (line) =>
      `${serviceText(line.name, 40)} ${formatFigure(line.values[0] ?? 0)} → ${formatFigure(line.values.at(-1) ?? 0)}${unit === '' ? '' : ` ${unit}`} (${formatChange((line.values.at(-1) ?? 0) - (line.values[0] ?? 0))})`,
  );
  const more = omitted > 0 ? ` ${omitted} more project${omitted === 1 ? '' : 's'} not shown.` : '';
  return {
    block,
    text: `${serviceText(measure, 30)} by project, weeks ${categories[0]} – ${categories.at(-1)} (UTC): ${each.join('; ')}.${more}`,
  };
}

function movement(values: readonly number[]): number {
  return Math.abs((values.at(-1) ?? 0) - (values[0] ?? 0));
}
