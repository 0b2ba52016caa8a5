/**
 * The simulator's data: projects, visibility overviews, gaps, results (probes) and reasoning cards,
 * either generated deterministically from a seed or loaded from a JSON fixture.
 *
 * Determinism: all values come from a small seeded PRNG (mulberry32) whose seed is derived from
 * (seed, project id, run number); identifiers are UUID-formatted SHA-256 digests of
 * (seed, kind, key). The same seed and the same sequence of `advanceRun` calls give the same data.
 *
 * Runs: every project has a run counter (0 at start). `advanceRun` moves the data:
 * - numeric metric values and numeric fields of the per-engine rows drift by a few percent
 *   (percentages stay within 0..100, positions >= 1); a metric labelled like "Open gaps" follows the gap count;
 * - 2-4 gaps are resolved (removed) and 2-4 new ones appear (drawn from the project's prompt pool,
 *   with `trend: "new"` and `first_seen_run`); the rest may change trend; gaps are then ordered worst first
 *   (most engines losing, then trend worse > new > stable > improving, then prompt_ref);
 * - generated projects also get new results (new probe ids), new reasoning cards and fresh alerts.
 *   Fixture projects keep the fixture's probes, cards and alerts.
 *
 * Fixture format and validation: `fixture.ts`; the generated projects' profiles and moves: `generated.ts`.
 */
import {
  validateFixture,
  type FixtureGap,
  type FixtureProbe,
  type FixtureProject,
  type FixtureReason,
  type FixtureReasoningCard,
  type FixtureRun,
  type SimulatorFixture,
} from './fixture';

import { between, deterministicUuid, pick, rngFor, round, shuffle, type Rng } from './random';

import {
  ENGINES,
  IMPACTS,
  PROFILES,
  TRENDS,
  compareGaps,
  drift,
  engineRows,
  genericProfile,
  losingSubset,
  mean,
  mostCommon,
  newGap,
  promptPool,
  type PoolPrompt,
  type Profile,
} from './generated';

const DEFAULT_SEED = 1;
export const RANGES = ['7d', '14d', '30d', '90d'] as const;

interface ProjectState {
  project: FixtureProject;
  /** Generated projects get new results, cards and alerts every run. */
  generated: boolean;
  profile: Profile;
  pool: PoolPrompt[];
  run: number;
  runId: string;
  probes: FixtureProbe[];
  reasoning: Record<string, FixtureReasoningCard>;
}

export interface RunInfo {
  projectId: string;
  /** Run number after the advance (1 for the first advance). */
  run: number;
  runId: string;
  /** Results recorded in the run (the count run.completed carries). */
  answers: number;
  /** Prompt ids of gaps that disappeared / appeared with this run. */
  resolvedGaps: string[];
  newGaps: string[];
}

export interface ProjectSummary {
  id: string;
  name: string;
  industry: string;
}

export type ReasoningLookup =
  | { ok: true; card: FixtureReasoningCard & { id: string; result_id: string } }
  | { ok: false; reason: 'no_project' | 'no_result' | 'no_card' };

export class SimulatorData {
  private readonly states = new Map<string, ProjectState>();

  private constructor(readonly seed: number) {}

  /** Deterministic generated data: four projects with 40-question pools. */
  static generate(seed: number = DEFAULT_SEED): SimulatorData {
    const data = new SimulatorData(seed);
    for (const profile of PROFILES) {
      const id = deterministicUuid(seed, 'project', profile.name);
      const rng = rngFor(seed, id, 'run', 0);
      const pool = promptPool(seed, id, profile);
      const gapCount = 22 + Math.floor(rng() * 5);
      const gaps = pool
        .slice(0, gapCount)
        .map((prompt) => newGap(rng, prompt, profile.competitors, 0, pick(rng, TRENDS)))
        .sort(compareGaps);
      const engines = ENGINES.map((engine) => ({
        engine,
        visibility: between(rng, 15, 70, 1),
        mentions: Math.floor(between(rng, 20, 400, 0)),
        avg_position: between(rng, 1.5, 4.5, 1),
        change_pts: 0,
      }));
      const project: FixtureProject = {
        id,
        name: profile.name,
        industry: profile.industry,
        visibility: {
          metrics: [
            { label: 'Visibility score', value: 0, caption: `Share of AI answers that mention ${profile.name}` },
            { label: 'Share of voice', value: between(rng, 8, 35, 1), caption: 'Mentions vs. all tracked brands, in %' },
            { label: 'Mentions', value: 0, caption: `Answers naming ${profile.name}` },
            { label: 'Average position', value: 0, caption: 'Rank among brands named in an answer (1 = first)' },
            { label: 'Top competitor', value: '', caption: 'Competitor that wins most lost questions' },
            { label: 'Open gaps', value: gaps.length, caption: 'Questions the project loses' },
          ],
          engines,
          alerts: [],
        },
        gaps,
      };
      data.recompute(data.add(project, true, profile, pool), rng, []);
    }
    return data;
  }

  /** Data served from a fixture (validated here; throws `FixtureError`). The fixture's seed wins over `seed`. */
  static fromFixture(fixture: unknown, seed?: number): SimulatorData {
    const valid = validateFixture(fixture);
    const data = new SimulatorData(valid.seed ?? seed ?? DEFAULT_SEED);
    for (const source of valid.projects) {
      const project = structuredClone(source);
      const competitors = [...new Set(project.gaps.map((gap) => gap.top_competitor).filter((c) => c !== ''))];
      const profile = genericProfile(project.name, project.industry, competitors);
      const taken = new Set(project.gaps.map((gap) => gap.prompt_id));
      const pool = promptPool(data.seed, project.id, profile).filter((prompt) => !taken.has(prompt.prompt_id));
      data.add(project, false, profile, pool);
    }
    return data;
  }

  /** Adds a project at run 0, with a fixture's probes and cards when it has them. */
  private add(project: FixtureProject, generated: boolean, profile: Profile, pool: PoolPrompt[]): ProjectState {
    const runId = deterministicUuid(this.seed, project.id, 'run', 0);
    const state = { project, generated, profile, pool, run: 0, runId, probes: project.probes ?? [], reasoning: project.reasoning ?? {} };
    this.states.set(project.id, state);
    return state;
  }

  projectIds(): string[] {
    return [...this.states.keys()];
  }

  hasProject(projectId: string): boolean {
    return this.states.has(projectId);
  }

  projects(): ProjectSummary[] {
    return [...this.states.values()].map(({ project }) => ({ id: project.id, name: project.name, industry: project.industry }));
  }

  runNumber(projectId: string): number {
    return this.state(projectId).run;
  }

  currentRunId(projectId: string): string {
    return this.state(projectId).runId;
  }

  /** The overview as /visibility serves it (a copy), or undefined for an unknown project. */
  visibility(projectId: string, range: string = '7d'): Record<string, unknown> | undefined {
    const visibility = this.states.get(projectId)?.project.visibility;
    return visibility && { range, ...structuredClone(visibility) };
  }

  /** The first `pageSize` gaps (worst first) and the total, or undefined for an unknown project. */
  gaps(projectId: string, pageSize: number = Number.MAX_SAFE_INTEGER): { gaps: FixtureGap[]; total: number } | undefined {
    const gaps = this.states.get(projectId)?.project.gaps;
    return gaps && { gaps: structuredClone(gaps.slice(0, pageSize)), total: gaps.length };
  }

  /** Results of the current run, optionally of one prompt, or undefined for an unknown project. */
  results(projectId: string, promptId?: string): FixtureProbe[] | undefined {
    const probes = this.states.get(projectId)?.probes;
    return structuredClone(promptId === undefined ? probes : probes?.filter((probe) => probe.prompt_id === promptId));
  }

  reasoning(projectId: string, resultId: string): ReasoningLookup {
    const state = this.states.get(projectId);
    if (state === undefined) return { ok: false, reason: 'no_project' };
    const probe = state.probes.find((p) => p.id === resultId);
    if (probe === undefined) return { ok: false, reason: 'no_result' };
    const cardId = probe.reasoning_card_id;
    const card = cardId === null ? undefined : state.reasoning[cardId];
    if (cardId === null || card === undefined) return { ok: false, reason: 'no_card' };
    return { ok: true, card: { id: cardId, result_id: resultId, ...structuredClone(card) } };
  }

  /** Moves the project to its next run (see the module comment). Throws for an unknown project. */
  advanceRun(projectId: string): RunInfo {
    const state = this.state(projectId);
    const { project } = state;
    state.run += 1;
    state.runId = deterministicUuid(this.seed, projectId, 'run', state.run);
    const scripted = project.runs?.[state.run - 1];
    if (scripted !== undefined) return this.applyScriptedRun(state, scripted);
    const rng = rngFor(this.seed, projectId, 'run', state.run);

    // Resolve 2-4 gaps, improving ones first, and return their prompts to the pool.
    const resolveCount = Math.min(2 + Math.floor(rng() * 3), Math.max(0, project.gaps.length - 1));
    const candidates = shuffle(rng, project.gaps).sort((a, b) => Number(b['trend'] === 'improving') - Number(a['trend'] === 'improving'));
    const resolved = new Set(candidates.slice(0, resolveCount).map((gap) => gap.prompt_id));
    const kept = project.gaps.filter((gap) => !resolved.has(gap.prompt_id));
    const pooled = new Set(state.pool.map((prompt) => prompt.prompt_id));
    for (const { prompt_id, prompt_ref, prompt_text } of project.gaps.filter(
      (gap) => resolved.has(gap.prompt_id) && !pooled.has(gap.prompt_id),
    )) {
      const ref = typeof prompt_ref === 'number' ? prompt_ref : 0;
      state.pool.push({ prompt_id, prompt_ref: ref, prompt_text, subject: state.profile.subjects[0] ?? '', cards: false });
    }

    // Existing gaps: some change trend or an engine.
    for (const gap of kept) {
      if ('trend' in gap && rng() < 0.35) gap['trend'] = pick(rng, TRENDS);
      if (rng() < 0.2) gap.platforms_losing = losingSubset(rng, 1, 5);
    }

    // 2-4 new gaps from prompts that aren't gaps now.
    const open = new Set(kept.map((gap) => gap.prompt_id));
    const available = shuffle(
      rng,
      state.pool.filter((prompt) => !open.has(prompt.prompt_id) && !resolved.has(prompt.prompt_id)),
    );
    const added = available
      .slice(0, 2 + Math.floor(rng() * 3))
      .map((prompt) => newGap(rng, prompt, state.profile.competitors, state.run, 'new'));
    project.gaps = [...kept, ...added].sort(compareGaps);

    // Numbers drift.
    for (const row of engineRows(project.visibility)) {
      const old = row['visibility'];
      for (const [key, value] of Object.entries(row)) {
        if (typeof value === 'number' && !/change|delta/i.test(key)) row[key] = drift(rng, value, key);
      }
      if (typeof old === 'number' && typeof row['visibility'] === 'number' && typeof row['change_pts'] === 'number') {
        row['change_pts'] = round(row['visibility'] - old, 1);
      }
    }
    for (const metric of project.visibility.metrics) {
      if (typeof metric.value === 'number') metric.value = drift(rng, metric.value, metric.label);
    }
    const newGaps = added.map((gap) => gap.prompt_id);
    this.recompute(state, rng, newGaps);

    return {
      projectId,
      run: state.run,
      runId: state.runId,
      answers: answersOf(state),
      resolvedGaps: [...resolved],
      newGaps,
    };
  }

  /** The current data as a fixture (a deep copy); `fromFixture(toFixture())` serves the same answers. */
  toFixture(): SimulatorFixture {
    return {
      seed: this.seed,
      projects: [...this.states.values()].map((state) => ({
        ...structuredClone(state.project),
        probes: structuredClone(state.probes),
        reasoning: structuredClone(state.reasoning),
      })),
    };
  }

  /** The project as a fixture's scripted run says (no drift, no recomputed figures). */
  private applyScriptedRun(state: ProjectState, scripted: FixtureRun): RunInfo {
    const { project } = state;
    const before = new Set(project.gaps.map((gap) => gap.prompt_id));
    if (scripted.visibility !== undefined) project.visibility = structuredClone(scripted.visibility);
    if (scripted.gaps !== undefined) project.gaps = structuredClone(scripted.gaps);
    const after = new Set(project.gaps.map((gap) => gap.prompt_id));
    return {
      projectId: project.id,
      run: state.run,
      runId: state.runId,
      answers: scripted.answers ?? answersOf(state),
      resolvedGaps: [...before].filter((id) => !after.has(id)),
      newGaps: [...after].filter((id) => !before.has(id)),
    };
  }

  private state(projectId: string): ProjectState {
    const state = this.states.get(projectId);
    if (state === undefined) throw new Error(`Unknown project "${projectId}"`);
    return state;
  }

  /** Derived figures: "Open gaps" for every project; metrics, alerts, results and cards for generated ones. */
  private recompute(state: ProjectState, rng: Rng, newGapIds: readonly string[]): void {
    const { project } = state;
    for (const metric of project.visibility.metrics) {
      if (/open gaps/i.test(metric.label) && typeof metric.value === 'number') metric.value = project.gaps.length;
    }
    if (!state.generated) return;

    const rows = engineRows(project.visibility);
    const numbers = (key: string): number[] => rows.map((row) => row[key]).filter((v): v is number => typeof v === 'number');
    for (const metric of project.visibility.metrics) {
      if (metric.label === 'Visibility score') metric.value = mean(numbers('visibility'), 1);
      else if (metric.label === 'Mentions') metric.value = numbers('mentions').reduce((sum, v) => sum + v, 0);
      else if (metric.label === 'Average position') metric.value = mean(numbers('avg_position'), 1);
      else if (metric.label === 'Top competitor') {
        metric.value = mostCommon(project.gaps.map((gap) => gap.top_competitor)) ?? 'none';
      }
    }

    const alerts: Record<string, unknown>[] = [];
    const worst = project.gaps[0];
    if (worst !== undefined) {
      alerts.push({
        severity: worst.platforms_losing.length >= 4 ? 'critical' : 'warning',
        message: `Losing "${worst.prompt_text}" on ${worst.platforms_losing.length} engines to ${worst.top_competitor}`,
      });
    }
    for (const row of rows) {
      const change = row['change_pts'];
      if (typeof change === 'number' && change <= -3) {
        alerts.push({
          severity: 'warning',
          engine: row['engine'],
          message: `Visibility on ${String(row['engine'])} fell ${Math.abs(change)} points since the last run`,
        });
      }
    }
    if (state.run === 0) {
      alerts.push({ severity: 'info', message: `Baseline run: ${project.gaps.length} gaps across ${rows.length} engines` });
    } else if (newGapIds.length > 0) {
      alerts.push({ severity: 'info', message: `${newGapIds.length} new gaps since the last run` });
    }
    project.visibility['alerts'] = alerts;

    // Results of this run: one probe per pool prompt and engine; cards on most losing results.
    const gapsById = new Map(project.gaps.map((gap) => [gap.prompt_id, gap]));
    const probes: FixtureProbe[] = [];
    const reasoning: Record<string, FixtureReasoningCard> = {};
    for (const prompt of state.pool) {
      const gap = gapsById.get(prompt.prompt_id);
      for (const engine of ENGINES) {
        const losing = gap !== undefined && gap.platforms_losing.includes(engine);
        const mentioned = !losing && (gap !== undefined || rng() < 0.85);
        const withCard = prompt.cards && (losing || !mentioned || rng() < 0.15);
        const cardId = withCard ? deterministicUuid(this.seed, project.id, 'card', state.run, prompt.prompt_id, engine) : null;
        probes.push({
          id: deterministicUuid(this.seed, project.id, 'result', state.run, prompt.prompt_id, engine),
          prompt_id: prompt.prompt_id,
          engine,
          run_id: state.runId,
          mentioned,
          position: mentioned ? 1 + Math.floor(rng() * 4) : null,
          reasoning_card_id: cardId,
        });
        if (cardId !== null) {
          const competitor = gap?.top_competitor ?? pick(rng, state.profile.competitors);
          reasoning[cardId] = { reasons: this.reasons(rng, project.name, engine, competitor, prompt.subject, mentioned) };
        }
      }
    }
    state.probes = probes;
    state.reasoning = reasoning;
  }

  private reasons(rng: Rng, name: string, engine: string, competitor: string, subject: string, mentioned: boolean): FixtureReason[] {
    const bank: FixtureReason[] = mentioned
      ? [
          { impact: 'high', category: 'content', detail: `${name}'s buying guide for "${subject}" is quoted directly by ${engine}.` },
          { impact: 'medium', category: 'reviews', detail: `Recent reviews of ${name} appear in the sources ${engine} cites.` },
          { impact: 'low', category: 'authority', detail: `Two independent articles list ${name} next to ${competitor}.` },
        ]
      : [
          ['content', `${competitor} has a comparison page for "${subject}" that ${engine} quotes; ${name} has none.`],
          ['citations', `${engine} cites review sites that list ${competitor} but not ${name}.`],
          ['reviews', `${name} has fewer recent reviews than ${competitor} on the sources ${engine} uses.`],
          ['structured data', `Product pages lack structured data, so ${engine} can't read prices or availability.`],
          ['freshness', `The newest ${name} page about ${subject} is over a year old.`],
        ].map(([category, detail]) => ({ impact: pick(rng, IMPACTS), category: category!, detail: detail! }));
    return shuffle(rng, bank).slice(0, 2 + Math.floor(rng() * Math.min(3, bank.length - 1)));
  }
}

/** The results a run recorded (the count run.completed carries): its probes, else one per gap and engine. */
function answersOf(state: ProjectState): number {
  return state.probes.length > 0 ? state.probes.length : state.project.gaps.length * ENGINES.length;
}
