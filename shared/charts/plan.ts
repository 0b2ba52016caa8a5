/**
 * From the renderer's input to what is drawn, pure: the panels' specs and the alt text, or why there
 * is no chart. Bad input of any shape ends here as a reason, never as an exception.
 */
import { truncateText } from '../slack-text';
import { altTextFor, cleanName, preparePanel, type ChartPanel, type NamedPoint } from './series';
import { panelSubtitle, type PanelSpec } from './spec';
import type { TrendChartInput } from './types';
import { asArray } from '../util';

export type ChartPlan = { kind: 'draw'; panels: PanelSpec[]; altText: string } | { kind: 'skipped'; reason: string };

const DEFAULT_MEASURE = 'Share of voice';
/** Characters of a name in a panel title (one line at the title size). */
const TITLE_CHARS = 36;

/** The panels to draw: engines always (or no chart), the brand against its rivals when its data allows. */
export function planTrendChart(input: TrendChartInput): ChartPlan {
  const record: Partial<TrendChartInput> = typeof input === 'object' && input !== null ? input : {};
  const projectName = cleanName(record.projectName);
  const engines = preparePanel(
    asArray(record.engines).map((p) => ({ name: field(p, 'engine'), atMs: field(p, 'atMs'), value: field(p, 'value') })),
  );
  if (engines.kind === 'empty') return { kind: 'skipped', reason: engines.reason };
  const panels: PanelSpec[] = [
    { title: truncateText(projectName, TITLE_CHARS), subtitle: panelSubtitle('Visibility by engine', engines.panel), panel: engines.panel },
  ];
  const rivals = planRivals(record.rivals);
  if (rivals?.panel !== undefined) panels.push(rivals.panel);
  const altText = altTextFor({
    projectName,
    engines: engines.panel,
    rivals:
      rivals === undefined
        ? undefined
        : rivals.panel !== undefined
          ? { measure: rivals.measure, panel: rivals.panel.panel }
          : { measure: rivals.measure, missing: rivals.missing },
  });
  return { kind: 'draw', panels, altText };
}

type RivalsPlan = { measure: string; panel: PanelSpec; missing?: undefined } | { measure: string; panel?: undefined; missing: string };

function planRivals(rivals: TrendChartInput['rivals'] | null | undefined): RivalsPlan | undefined {
  if (typeof rivals !== 'object' || rivals === null) return undefined;
  const measure = typeof rivals.measure === 'string' ? truncateText(cleanName(rivals.measure), TITLE_CHARS) : DEFAULT_MEASURE;
  const brand = cleanName(rivals.brand);
  const points: NamedPoint[] = asArray(rivals.points).map((p) => ({
    name: field(p, 'name'),
    atMs: field(p, 'atMs'),
    value: field(p, 'value'),
  }));
  const prepared = preparePanel(points, { keep: brand });
  if (prepared.kind === 'empty') return { measure, missing: prepared.reason };
  const panel: ChartPanel = prepared.panel;
  if (panel.keptLabel === undefined) return { measure, missing: 'the brand has no figure in the last 8 weeks' };
  if (panel.series.length < 2) return { measure, missing: 'no rival has a figure in the last 8 weeks' };
  return {
    measure,
    panel: {
      title: `${truncateText(brand, TITLE_CHARS)} vs top rivals`,
      subtitle: panelSubtitle(measure, panel),
      panel,
      emphasis: panel.keptLabel,
    },
  };
}

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined;
}
