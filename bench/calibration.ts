/**
 * Simulated project histories with a known truth, run through the digest's real verdict code
 * (`buildModel` → `assess` → `buildSnapshot`, exactly as shared/digest/run-completed.ts chains them), to
 * measure false marks and detection delays (docs/DIGEST.md, "Calibration"). Seeded: the same seed gives
 * the same figures. Used by `npm run calibrate` (bench/calibrate.ts) and by a unit test.
 *
 * The truth: 5 engines, each a binomial share at its answers (the run's answers / 5); "Visibility score"
 * is the pooled share in percent (one decimal); "Average position" a mean over the mentioning answers
 * (each answer's position 1 + Poisson(2)); "Mentions" an overdispersed Poisson count; the gaps churn
 * (new ones to random rivals on 1–5 engines, some resolve, some spread to another engine, a few change
 * winner) and "Open gaps" counts them.
 */
import type { Gap, GenericRow, VisibilityOverview } from '../shared/read-api-types';
import type { ProjectSnapshot } from '../shared/ports';
import { buildModel, verdictOutcome, type DigestInput } from '../shared/digest/render';
import { assess, type StatusMark } from '../shared/digest/render/significance';
import { buildSnapshot } from '../shared/digest/snapshot';
import type { Thresholds } from '../shared/digest/verdict';
import { mulberry32, type Rng } from '../local/simulator/random';

function normal(random: Rng): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

function binomial(random: Rng, n: number, p: number): number {
  if (n > 60) return Math.min(n, Math.max(0, Math.round(n * p + Math.sqrt(n * p * (1 - p)) * normal(random))));
  let k = 0;
  for (let i = 0; i < n; i += 1) if (random() < p) k += 1;
  return k;
}

function poisson(random: Rng, mean: number): number {
  if (mean > 50) return Math.max(0, Math.round(mean + Math.sqrt(mean) * normal(random)));
  const limit = Math.exp(-mean);
  let k = 0;
  for (let p = random(); p > limit; p *= random()) k += 1;
  return k;
}

export const ENGINES = ['ChatGPT', 'Perplexity', 'Gemini', 'Claude', 'Copilot'] as const;
const RIVALS = ['Summitline', 'Kestrel Gear', 'Alpenwise', 'Northbound', 'Cairn & Co'];
/** The rival of the takeover scenario (never one of the usual ones). */
export const TAKEOVER_RIVAL = 'TrailForge';

/** The true state of the project at a run. */
export interface Truth {
  /** True share per engine (0–1). */
  shares: number[];
  answers: number;
}

interface SimGap {
  id: number;
  engines: string[];
  rival: string;
}

/** A project's simulated service: what the read API would return at each run. */
class SimProject {
  private gaps: SimGap[] = [];
  private nextId = 1;

  constructor(private readonly random: Rng) {
    for (let i = 0; i < 12; i += 1) this.gaps.push(this.newGap(this.pick(RIVALS)));
  }

  private pick<T>(list: readonly T[]): T {
    return list[Math.floor(this.random() * list.length)]!;
  }

  private newGap(rival: string, engines?: number): SimGap {
    const count = engines ?? 1 + binomial(this.random, 4, 0.15);
    const shuffled = [...ENGINES].sort(() => this.random() - 0.5);
    return { id: this.nextId++, engines: shuffled.slice(0, count), rival };
  }

  /** The usual churn of one run: new gaps, resolved ones, spread and winner changes. */
  private churn(): void {
    this.gaps = this.gaps.filter(() => this.random() >= 0.025);
    for (let i = poisson(this.random, 0.3); i > 0; i -= 1) this.gaps.push(this.newGap(this.pick(RIVALS)));
    for (const gap of this.gaps) {
      if (gap.engines.length < ENGINES.length && this.random() < 0.01) {
        const more = ENGINES.find((e) => !gap.engines.includes(e));
        if (more) gap.engines.push(more);
      }
      if (this.random() < 0.005) gap.rival = this.pick(RIVALS);
    }
  }

  /** A rival takes `prompts` new prompts, each lost on `engines` engines. */
  takeover(prompts: number, engines: number): void {
    for (let i = 0; i < prompts; i += 1) this.gaps.push(this.newGap(TAKEOVER_RIVAL, engines));
  }

  run(truth: Truth, withChurn: boolean): { overview: VisibilityOverview; gaps: Gap[] } {
    if (withChurn) this.churn();
    const perEngine = Math.max(1, Math.floor(truth.answers / ENGINES.length));
    const hits = truth.shares.map((p) => binomial(this.random, perEngine, p));
    const mentioned = hits.reduce((a, b) => a + b, 0);
    const answered = perEngine * ENGINES.length;
    // Each mentioning answer's position is 1 + Poisson(2): the mean of n of them is ~ N(3, 2/n).
    const position = mentioned > 0 ? 3 + Math.sqrt(2 / mentioned) * normal(this.random) : 3;
    const mentions = poisson(this.random, answered * 0.8 * (1 + 0.05 * normal(this.random)));
    const engines: GenericRow[] = ENGINES.map((name, i) => [
      ['engine', name],
      ['visibility', Math.round((1000 * hits[i]!) / perEngine) / 10],
    ]);
    const gaps: Gap[] = this.gaps.map((g) => ({
      prompt_id: `p${g.id}`,
      prompt_ref: g.id,
      prompt_text: `Prompt ${g.id}`,
      platforms_losing: [...g.engines],
      top_competitor: g.rival,
      extra: [],
    }));
    return {
      overview: {
        metrics: [
          { label: 'Visibility score', value: Math.round((1000 * mentioned) / answered) / 10, caption: null },
          { label: 'Average position', value: Math.round(position * 10) / 10, caption: null },
          { label: 'Mentions', value: mentions, caption: null },
          { label: 'Open gaps', value: gaps.length, caption: null },
        ],
        engines,
        alerts: [],
      },
      gaps,
    };
  }
}

/** One run as the digest judged it. */
export interface JudgedRun {
  mark: StatusMark;
  phrases: string[];
}

/** A simulated project, judged run after run by the real verdict code. */
export class SimulatedDigest {
  private readonly project: SimProject;
  private previous: ProjectSnapshot | null = null;
  private runNumber = 0;

  constructor(
    seed: number,
    private readonly thresholds?: Thresholds | undefined,
  ) {
    this.project = new SimProject(mulberry32(seed));
  }

  takeover(prompts: number, engines: number): void {
    this.project.takeover(prompts, engines);
  }

  /** The next daily run at `truth`: its digest's mark and headline phrases; the snapshot carried on. */
  next(truth: Truth): JudgedRun {
    this.runNumber += 1;
    const { overview, gaps } = this.project.run(truth, this.runNumber > 1);
    const createdAt = new Date(Date.UTC(2026, 0, 1) + this.runNumber * 86_400_000).toISOString();
    const run = { eventId: `ev-${this.runNumber}`, runId: `run-${this.runNumber}`, answers: truth.answers, createdAt, status: 'completed' };
    const input: DigestInput = {
      project: { id: 'sim', name: 'Simulated', industry: null },
      run,
      overview,
      gaps,
      pageSize: 500,
      previous: this.previous,
      reasoning: new Map(),
      options: { thresholds: this.thresholds },
    };
    const model = buildModel(input);
    const { mark, changes } = assess(model);
    this.previous = buildSnapshot(
      { projectId: 'sim', runId: run.runId, createdAt, pageSize: 500, rawGapCount: gaps.length, answers: truth.answers },
      overview,
      gaps,
      this.previous,
      verdictOutcome(model),
    );
    return { mark, phrases: changes.map((c) => c.phrase) };
  }
}

/** The stable truth: shares near a half, differing by engine. */
export const BASE_SHARES = [0.55, 0.5, 0.45, 0.58, 0.48];

export function stableTruth(answers: number): Truth {
  return { shares: [...BASE_SHARES], answers };
}

/** Every engine's share moved by `points` (so the pooled share moves by as much). */
export function shifted(answers: number, points: number): Truth {
  return { shares: BASE_SHARES.map((p) => Math.min(1, Math.max(0, p + points / 100))), answers };
}

const LOUD: ReadonlySet<StatusMark> = new Set(['🔴', '🟢', '🟡']);

/** False 🔴/🟢/🟡 per project-year of daily runs on a project whose truth never moves. */
export function falseMarksPerYear(options: { answers: number; years: number; seed: number; thresholds?: Thresholds | undefined }): number {
  let loud = 0;
  for (let year = 0; year < options.years; year += 1) {
    const digest = new SimulatedDigest(options.seed + year * 7919, options.thresholds);
    for (let day = 0; day < 365; day += 1) if (LOUD.has(digest.next(stableTruth(options.answers)).mark)) loud += 1;
  }
  return loud / options.years;
}

/** Runs of stable history before a change is injected. */
export const WARM_UP_RUNS = 30;

/**
 * Runs after the change until it is 🔴 (1 = the run it happens on), or null when not within `horizon`.
 * `truthAt(i)` is the truth at the i-th run after the change (1-based).
 */
export function detectionDelay(options: {
  seed: number;
  answers: number;
  horizon: number;
  truthAt: (run: number) => Truth;
  before?: ((digest: SimulatedDigest) => void) | undefined;
  thresholds?: Thresholds | undefined;
  detected?: ((run: JudgedRun) => boolean) | undefined;
}): number | null {
  const digest = new SimulatedDigest(options.seed, options.thresholds);
  for (let i = 0; i < WARM_UP_RUNS; i += 1) digest.next(stableTruth(options.answers));
  options.before?.(digest);
  const detected = options.detected ?? ((run: JudgedRun) => run.mark === '🔴');
  for (let run = 1; run <= options.horizon; run += 1) if (detected(digest.next(options.truthAt(run)))) return run;
  return null;
}
