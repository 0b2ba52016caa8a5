/** The digest the native-chart benchmark posts: a report with six engines over 20 daily runs, with or without its trend. */
import type { DigestInput } from '../shared/digest/render';
import { buildSnapshot } from '../shared/digest/snapshot';
import type { Gap, VisibilityOverview } from '../shared/read-api-types';

const DAY_MS = 24 * 3600 * 1000;
const AT = Date.UTC(2026, 10, 20, 9);
const ENGINES = ['ChatGPT', 'Claude', 'Gemini', 'Perplexity', 'Copilot', 'Google AI Overviews'];

function overview(shift: number): VisibilityOverview {
  return {
    metrics: [
      { label: 'Visibility', value: 48 + shift, caption: 'Share of answers mentioning the project' },
      { label: 'Avg position', value: 3.2, caption: null },
      { label: 'Open gaps', value: 12, caption: null },
    ],
    engines: ENGINES.map((engine, k) => [
      ['engine', engine],
      ['visibility', 30 + 6 * k + shift],
    ]),
    alerts: [],
  };
}

const GAPS: Gap[] = Array.from({ length: 12 }, (_, i) => ({
  prompt_id: `p-${i}`,
  prompt_ref: i,
  prompt_text: `Best tent for question ${i}?`,
  platforms_losing: ENGINES.slice(0, 1 + (i % 4)),
  top_competitor: i % 2 === 0 ? 'Rival Gear' : 'Summit Co',
  extra: [],
}));

export function nativeChartDigestInput(withTrend: boolean): DigestInput {
  const previous = buildSnapshot({ projectId: 'np', runId: 'r-19', createdAt: new Date(AT - DAY_MS).toISOString() }, overview(4), GAPS);
  const trend = Array.from({ length: 20 }, (_, i) => ({
    atMs: AT - (19 - i) * DAY_MS,
    engines: Object.fromEntries(ENGINES.map((engine, k) => [engine, 30 + 6 * k + 4 * Math.sin(i / 3 + k)])),
  }));
  return {
    project: { id: 'np', name: 'Northwind Outdoor', industry: null },
    run: { eventId: 'e-20', runId: 'r-20', answers: 1200, createdAt: new Date(AT).toISOString() },
    overview: overview(-6),
    gaps: GAPS,
    previous,
    reasoning: new Map(),
    options: withTrend ? { trend } : {},
  };
}
