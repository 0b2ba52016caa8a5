/**
 * A channel's digest filter (`/visibility filter <project> engines=ChatGPT,Claude alerts>=warning
 * min-change=2`), stored with the channel's subscription: which engines it hears about, which alerts,
 * and the smallest change it wants called. Pure: the digest filters the renderer's input per channel
 * (the renderer stays unaware of filters); ./channel-gate.ts decides whether anything is left to post.
 * Light on purpose (no renderer import): the Slack function parses and shows filters with it.
 *
 * - `engines=`: engine rows outside the list are left out; a gap keeps only the listed engines it is lost
 *   on and is left out when none is (the previous snapshot's gaps likewise, so a gap left out is not
 *   "resolved"). Names compare case-, space- and punctuation-insensitively (`chat-gpt` = `ChatGPT`).
 * - `alerts>=<level>`: alerts below the level (critical > error > warning > info > unrated) are left out;
 *   with `engines=`, so is an alert that names another engine (an `engine`/`platform` field).
 * - `min-change=<n>`: a change smaller than n (in the figure's unit: points for a share) is not called,
 *   even when it is beyond its noise (the renderer's `minChange`).
 */
import type { Gap, GenericRow } from '../read-api-types';
import type { AlertLevel, ChannelFilter, ProjectSnapshot } from '../ports';

export type { AlertLevel, ChannelFilter } from '../ports';
import type { DigestInput } from './render/model';
import { alertView, rowName, SEVERITY_ORDER } from './rows';
import { quotedInput } from '../slack-text';

/** Alert levels a filter can ask for, most severe first. */
export const ALERT_LEVELS: readonly AlertLevel[] = ['critical', 'error', 'warning', 'info'];

export type FilterArgsParse = { ok: true; project: string; filter: ChannelFilter | null } | { ok: false; problem: string };

const MAX_ENGINES = 20;
const MAX_ENGINE_NAME = 60;
const MAX_MIN_CHANGE = 1000;
const TERM = /^(engines=|alerts>=|min-change=)/i;

const EXAMPLE = 'e.g. `filter Northwind engines=ChatGPT,Claude alerts>=warning min-change=2`, or `filter Northwind off`';

/**
 * `<project> <term>…` or `<project> off`. Terms come after the project (whose name may have spaces) and
 * combine; a term given twice is refused rather than one silently winning.
 */
export function parseFilterArgs(args: readonly string[]): FilterArgsParse {
  const last = args.at(-1);
  if (last !== undefined && last.toLowerCase() === 'off') return withProject(args.slice(0, -1), null);
  const firstTerm = args.findIndex((word) => TERM.test(word));
  if (firstTerm < 0) return { ok: false, problem: `name the project, then what to keep, ${EXAMPLE}` };
  const filter: { engines?: string[]; minAlertLevel?: AlertLevel; minChange?: number } = {};
  for (const word of args.slice(firstTerm)) {
    const problem = applyTerm(word, filter);
    if (problem !== null) return { ok: false, problem };
  }
  return withProject(args.slice(0, firstTerm), filter);
}

function withProject(words: readonly string[], filter: ChannelFilter | null): FilterArgsParse {
  const project = words
    .join(' ')
    .replace(/^["'“‘]+|["'”’]+$/g, '')
    .trim();
  if (project === '') return { ok: false, problem: `name the project first, ${EXAMPLE}` };
  return { ok: true, project, filter };
}

function applyTerm(word: string, filter: { engines?: string[]; minAlertLevel?: AlertLevel; minChange?: number }): string | null {
  const [, key = '', value = ''] = /^([a-z-]+(?:=|>=))(.*)$/i.exec(word) ?? [];
  const term = key.toLowerCase();
  if (term === 'engines=') {
    if (filter.engines) return '`engines=` is given twice: list every engine once, separated by commas';
    const engines = value
      .split(',')
      .map((e) => e.trim())
      .filter((e) => e !== '');
    if (engines.length === 0) return '`engines=` lists no engine: write e.g. `engines=ChatGPT,Claude`';
    if (engines.length > MAX_ENGINES) return `\`engines=\` lists more than ${MAX_ENGINES} engines`;
    if (engines.some((e) => e.length > MAX_ENGINE_NAME || engineKey(e) === '')) return '`engines=` has a name that is not an engine name';
    filter.engines = engines;
    return null;
  }
  if (term === 'alerts>=') {
    if (filter.minAlertLevel) return '`alerts>=` is given twice';
    const level = ALERT_LEVELS.find((l) => l === value.toLowerCase());
    if (!level) return `\`alerts>=\` takes one of ${ALERT_LEVELS.map((l) => `\`${l}\``).join(', ')}`;
    filter.minAlertLevel = level;
    return null;
  }
  if (term === 'min-change=') {
    if (filter.minChange !== undefined) return '`min-change=` is given twice';
    const number = /^\d+(\.\d+)?$/.test(value) ? Number(value) : Number.NaN;
    if (!Number.isFinite(number) || number <= 0 || number > MAX_MIN_CHANGE)
      return `\`min-change=\` takes a number above 0 and at most ${MAX_MIN_CHANGE} (points for a share), e.g. \`min-change=2\``;
    filter.minChange = number;
    return null;
  }
  return `${quotedInput(word)} is not a filter: use \`engines=…\`, \`alerts>=…\`, \`min-change=…\` or \`off\``;
}

/** How a name compares: lower case, letters and digits only. */
export function engineKey(name: string): string {
  return name.toLowerCase().replace(/[^\p{L}\p{N}]/gu, '');
}

/** True when the filter keeps nothing out. */
export function isEmptyFilter(filter: ChannelFilter | undefined): boolean {
  return filter === undefined || (!filter.engines?.length && filter.minAlertLevel === undefined && filter.minChange === undefined);
}

/** "engines ChatGPT, Claude · alerts ≥ warning · min-change 2" (raw: the caller sanitizes). */
export function describeFilter(filter: ChannelFilter): string {
  const parts: string[] = [];
  if (filter.engines?.length) parts.push(`engines ${filter.engines.join(', ')}`);
  if (filter.minAlertLevel) parts.push(`alerts ≥ ${filter.minAlertLevel}`);
  if (filter.minChange !== undefined) parts.push(`min-change ${filter.minChange}`);
  return parts.join(' · ');
}

// --- Applying ------------------------------------------------------------------------------------

function keepsEngine(filter: ChannelFilter): (name: string | null | undefined) => boolean {
  const wanted = new Set((filter.engines ?? []).map(engineKey));
  return (name) => wanted.size === 0 || (name !== null && name !== undefined && wanted.has(engineKey(name)));
}

/** Fields by which an alert names the engine it is about (the spec shows none; read by name when sent). */
const ALERT_ENGINE_FIELDS = ['engine', 'platform', 'engine_name', 'platform_name'];

function alertEngine(row: GenericRow): string | undefined {
  const field = row.find(([name, value]) => ALERT_ENGINE_FIELDS.includes(name.trim().toLowerCase()) && typeof value === 'string');
  return typeof field?.[1] === 'string' ? field[1] : undefined;
}

/** An alert at or above the level, and not about an engine outside the list (one naming no engine is about the project). */
function keepsAlert(filter: ChannelFilter, keepEngine: (name: string) => boolean): (row: GenericRow) => boolean {
  const limit = filter.minAlertLevel === undefined ? SEVERITY_ORDER.length : SEVERITY_ORDER.indexOf(filter.minAlertLevel);
  return (row) => {
    const engine = alertEngine(row);
    return SEVERITY_ORDER.indexOf(alertView(row).severity) <= limit && (engine === undefined || keepEngine(engine));
  };
}

/** A gap restricted to the kept engines; null when it is lost on none of them. */
function gapOnKept<G extends { platforms_losing?: string[] | undefined }>(gap: G, keeps: (name: string) => boolean): G | null {
  // A stored gap without its engines (older snapshots) can't be judged: kept.
  if (gap.platforms_losing === undefined) return gap;
  const platforms = gap.platforms_losing.filter(keeps);
  return platforms.length === 0 ? null : { ...gap, platforms_losing: platforms };
}

function filteredSnapshot(previous: ProjectSnapshot | null, keeps: (name: string) => boolean): ProjectSnapshot | null {
  if (previous === null) return null;
  return {
    ...previous,
    gaps: previous.gaps.flatMap((g) => gapOnKept(g, keeps) ?? []),
    ...(previous.engines ? { engines: Object.fromEntries(Object.entries(previous.engines).filter(([name]) => keeps(name))) } : {}),
  };
}

/** The renderer's input as this channel's filter lets it through (the same input without a filter). */
export function filterDigestInput(input: DigestInput, filter: ChannelFilter | undefined): DigestInput {
  if (filter === undefined || isEmptyFilter(filter)) return input;
  const keepEngine = keepsEngine(filter);
  const keeps = (name: string) => keepEngine(name);
  const engineFiltered = (filter.engines?.length ?? 0) > 0;
  const gaps: Gap[] = engineFiltered ? input.gaps.flatMap((g) => gapOnKept(g, keeps) ?? []) : input.gaps;
  return {
    ...input,
    overview: {
      ...input.overview,
      engines: input.overview.engines.filter((row) => keepEngine(rowName(row))),
      alerts: input.overview.alerts.filter(keepsAlert(filter, keeps)),
    },
    gaps,
    // Gaps of other engines are not "unreadable" here: the count is the service's, kept as is.
    previous: engineFiltered ? filteredSnapshot(input.previous, keeps) : input.previous,
    options: { ...input.options, minChange: filter.minChange },
    reasoning: input.reasoning,
  };
}
