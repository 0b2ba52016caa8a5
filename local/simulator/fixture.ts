/**
 * The simulator's JSON fixtures: their types, their validation and loading.
 *
 * Fixture format (`SimulatorFixture`, JSON), the same shapes the read API serves:
 *
 *   {
 *     "seed": 7,                                   // optional; drives ids and drift of later runs
 *     "projects": [{
 *       "id": "…uuid…", "name": "Acme", "industry": "Retail",
 *       "visibility": {                            // served as-is by /visibility (plus "range")
 *         "metrics": [{ "label": "Visibility score", "value": 41.2, "caption": "…" }],
 *         "engines": [{ "engine": "ChatGPT", "visibility": 40.1 }],   // any other fields: served as sent
 *         "alerts": [{ "severity": "warning", "message": "…" }]
 *       },
 *       "gaps": [{ "prompt_id": "…", "prompt_ref": 12, "prompt_text": "…",
 *                  "platforms_losing": ["Gemini"], "top_competitor": "Rival", "trend": "worse" }],
 *       "probes": [{ "id": "…", "prompt_id": "…", "reasoning_card_id": "card-1" }],   // optional
 *       "reasoning": { "card-1": { "reasons": [{ "impact": "high", "category": "content", "detail": "…" }] } }, // optional
 *       "runs": [{ "visibility": {…}, "gaps": […], "answers": 0 }]   // optional: scripted runs, see FixtureProject.runs
 *     }]
 *   }
 *
 * Extra fields anywhere are kept and served as sent. `validateFixture` checks the rest and throws a
 * `FixtureError` listing every problem with the path of the bad field (e.g. `projects[0].gaps[3].prompt_text`).
 */
import { readFileSync } from 'node:fs';
import { isRecord } from '../../shared/util';

export type JsonScalar = string | number | boolean | null;

export type FixtureMetric = { label: string; value: JsonScalar; caption?: string };

export type FixtureVisibility = {
  metrics: FixtureMetric[];
  /** Per-engine rows, alerts and anything else: served as sent. */
  [field: string]: unknown;
};

export type FixtureGap = {
  prompt_id: string;
  prompt_ref: string | number;
  prompt_text: string;
  platforms_losing: string[];
  top_competitor: string;
  /** Other fields (e.g. `trend`): served as sent. */
  [field: string]: unknown;
};

export type FixtureProbe = {
  id: string;
  /** The question the result belongs to (the results route filters on it). */
  prompt_id: string;
  /** A key of the project's `reasoning`, or null. */
  reasoning_card_id: string | null;
  [field: string]: unknown;
};

export type FixtureReason = { impact: string; category: string; detail: string };

export type FixtureReasoningCard = { reasons: FixtureReason[]; [field: string]: unknown };

export type FixtureProject = {
  id: string;
  name: string;
  industry: string;
  visibility: FixtureVisibility;
  gaps: FixtureGap[];
  probes?: FixtureProbe[];
  reasoning?: Record<string, FixtureReasoningCard>;
  /**
   * Scripted runs: the Nth `advanceRun` (N = 1, 2, …) applies `runs[N-1]` instead of random drift: its
   * `visibility` and `gaps` replace the project's (what it omits stays), `answers` is the count
   * run.completed carries. Past the last scripted run the project drifts as usual.
   */
  runs?: FixtureRun[];
};

export type FixtureRun = {
  visibility?: FixtureVisibility;
  gaps?: FixtureGap[];
  answers?: number;
};

export type SimulatorFixture = {
  seed?: number;
  projects: FixtureProject[];
};

// ---------------------------------------------------------------------------------------------
// Fixture validation
// ---------------------------------------------------------------------------------------------

export class FixtureError extends Error {
  override name = 'FixtureError';
  constructor(
    /** Each issue is "<path of the bad field>: <problem>". */
    readonly issues: readonly string[],
    source?: string,
  ) {
    const shown = issues.slice(0, 20);
    const more = issues.length > shown.length ? `\n  … and ${issues.length - shown.length} more` : '';
    super(`Invalid simulator fixture${source === undefined ? '' : ` ${source}`}:\n  ${shown.join('\n  ')}${more}`);
  }
}

function isScalar(value: unknown): value is JsonScalar {
  return value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

type Need = (ok: boolean, path: string, problem: string) => boolean;

function visibilityIssues(visibility: unknown, at: string, need: Need): void {
  if (!need(isRecord(visibility), at, 'must be an object with a "metrics" array')) return;
  const metrics = (visibility as Record<string, unknown>)['metrics'];
  if (!need(Array.isArray(metrics), `${at}.metrics`, 'must be an array')) return;
  (metrics as unknown[]).forEach((metric, mi) => {
    const mat = `${at}.metrics[${mi}]`;
    if (!need(isRecord(metric), mat, 'must be an object')) return;
    const m = metric as Record<string, unknown>;
    need(isNonEmptyString(m['label']), `${mat}.label`, 'must be a non-empty string');
    need('value' in m && isScalar(m['value']), `${mat}.value`, 'must be a string, number, boolean or null');
    if (m['caption'] !== undefined) need(typeof m['caption'] === 'string', `${mat}.caption`, 'must be a string when present');
  });
}

function gapIssues(gap: unknown, gat: string, promptIds: Set<string>, need: Need): void {
  if (!need(isRecord(gap), gat, 'must be an object')) return;
  const g = gap as Record<string, unknown>;
  if (need(isNonEmptyString(g['prompt_id']), `${gat}.prompt_id`, 'must be a non-empty string')) {
    const id = g['prompt_id'] as string;
    need(!promptIds.has(id), `${gat}.prompt_id`, `duplicates the prompt_id "${id}" of an earlier gap`);
    promptIds.add(id);
  }
  need(
    isNonEmptyString(g['prompt_ref']) || (typeof g['prompt_ref'] === 'number' && Number.isFinite(g['prompt_ref'])),
    `${gat}.prompt_ref`,
    'must be a number or a non-empty string',
  );
  need(isNonEmptyString(g['prompt_text']), `${gat}.prompt_text`, 'must be a non-empty string');
  const platforms = g['platforms_losing'];
  need(Array.isArray(platforms) && platforms.every((x) => typeof x === 'string'), `${gat}.platforms_losing`, 'must be an array of strings');
  need(typeof g['top_competitor'] === 'string', `${gat}.top_competitor`, 'must be a string');
}

function gapsIssues(gaps: unknown, at: string, need: Need): void {
  if (!need(Array.isArray(gaps), at, 'must be an array')) return;
  const promptIds = new Set<string>();
  (gaps as unknown[]).forEach((gap, gi) => gapIssues(gap, `${at}[${gi}]`, promptIds, need));
}

/** Scripted runs: each replaces the visibility and/or gaps it names; `answers` a whole number. */
function runsIssues(runs: unknown, at: string, need: Need): void {
  if (runs === undefined || !need(Array.isArray(runs), at, 'must be an array of scripted runs when present')) return;
  (runs as unknown[]).forEach((run, ri) => {
    const rat = `${at}[${ri}]`;
    if (!need(isRecord(run), rat, 'must be an object with "visibility", "gaps" and/or "answers"')) return;
    const r = run as Record<string, unknown>;
    if (r['visibility'] !== undefined) visibilityIssues(r['visibility'], `${rat}.visibility`, need);
    if (r['gaps'] !== undefined) gapsIssues(r['gaps'], `${rat}.gaps`, need);
    const answers = r['answers'];
    if (answers !== undefined)
      need(
        typeof answers === 'number' && Number.isInteger(answers) && answers >= 0,
        `${rat}.answers`,
        'must be a whole number >= 0 when present',
      );
  });
}

/** Every problem of a would-be fixture, each as "<path>: <problem>"; empty when it is valid. */
export function fixtureIssues(value: unknown): string[] {
  const issues: string[] = [];
  const need: Need = (ok, path, problem) => {
    if (!ok) issues.push(`${path}: ${problem}`);
    return ok;
  };
  if (!need(isRecord(value), '(root)', 'must be a JSON object with a "projects" array')) return issues;
  const root = value as Record<string, unknown>;
  if (root['seed'] !== undefined) {
    need(typeof root['seed'] === 'number' && Number.isInteger(root['seed']), 'seed', 'must be an integer when present');
  }
  const projects = root['projects'];
  if (!need(Array.isArray(projects) && projects.length > 0, 'projects', 'must be a non-empty array')) return issues;
  const projectIds = new Set<string>();
  (projects as unknown[]).forEach((project, pi) => {
    const at = `projects[${pi}]`;
    if (!need(isRecord(project), at, 'must be an object')) return;
    const p = project as Record<string, unknown>;
    if (need(isNonEmptyString(p['id']), `${at}.id`, 'must be a non-empty string')) {
      const id = p['id'] as string;
      need(!projectIds.has(id), `${at}.id`, `duplicates the id "${id}" of an earlier project`);
      projectIds.add(id);
    }
    need(isNonEmptyString(p['name']), `${at}.name`, 'must be a non-empty string');
    need(typeof p['industry'] === 'string', `${at}.industry`, 'must be a string');

    visibilityIssues(p['visibility'], `${at}.visibility`, need);
    gapsIssues(p['gaps'], `${at}.gaps`, need);
    runsIssues(p['runs'], `${at}.runs`, need);

    const reasoning = p['reasoning'];
    const cardIds = new Set<string>();
    if (reasoning !== undefined && need(isRecord(reasoning), `${at}.reasoning`, 'must be an object of card id → card')) {
      for (const [cardId, card] of Object.entries(reasoning as Record<string, unknown>)) {
        const cat = `${at}.reasoning["${cardId}"]`;
        cardIds.add(cardId);
        if (!need(isRecord(card), cat, 'must be an object with a "reasons" array')) continue;
        const reasons = (card as Record<string, unknown>)['reasons'];
        if (!need(Array.isArray(reasons), `${cat}.reasons`, 'must be an array')) continue;
        (reasons as unknown[]).forEach((reason, ri) => {
          const rat = `${cat}.reasons[${ri}]`;
          if (!need(isRecord(reason), rat, 'must be an object')) return;
          const r = reason as Record<string, unknown>;
          for (const field of ['impact', 'category', 'detail']) {
            need(typeof r[field] === 'string', `${rat}.${field}`, 'must be a string');
          }
        });
      }
    }

    const probes = p['probes'];
    if (probes !== undefined && need(Array.isArray(probes), `${at}.probes`, 'must be an array')) {
      const probeIds = new Set<string>();
      (probes as unknown[]).forEach((probe, ri) => {
        const rat = `${at}.probes[${ri}]`;
        if (!need(isRecord(probe), rat, 'must be an object')) return;
        const r = probe as Record<string, unknown>;
        if (need(isNonEmptyString(r['id']), `${rat}.id`, 'must be a non-empty string')) {
          const id = r['id'] as string;
          need(!probeIds.has(id), `${rat}.id`, `duplicates the id "${id}" of an earlier probe`);
          probeIds.add(id);
        }
        need(isNonEmptyString(r['prompt_id']), `${rat}.prompt_id`, 'must be a non-empty string');
        const card = r['reasoning_card_id'];
        if (need(card === null || isNonEmptyString(card), `${rat}.reasoning_card_id`, 'must be a non-empty string or null')) {
          if (typeof card === 'string') {
            need(cardIds.has(card), `${rat}.reasoning_card_id`, `names the card "${card}" that is not in ${at}.reasoning`);
          }
        }
      });
    }
  });
  return issues;
}

/** Checks a would-be fixture; returns it typed, or throws a `FixtureError` naming every bad field. */
export function validateFixture(value: unknown, source?: string): SimulatorFixture {
  const issues = fixtureIssues(value);
  if (issues.length > 0) throw new FixtureError(issues, source);
  return value as SimulatorFixture;
}

/** Reads and validates a fixture file; errors name the file and the bad field. */
export function loadFixtureFile(file: string): SimulatorFixture {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new FixtureError([`(file): cannot be read (${error instanceof Error ? error.message : String(error)})`], file);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new FixtureError([`(file): is not valid JSON (${error instanceof Error ? error.message : String(error)})`], file);
  }
  return validateFixture(parsed, file);
}
