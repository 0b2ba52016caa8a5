/**
 * The simulator's JSON fixtures (`SimulatorFixture`): the shapes the read API serves, per project its
 * visibility overview, gaps, and optionally its probes, reasoning cards and scripted runs. Extra fields
 * anywhere are kept and served as sent. `validateFixture` checks the rest and throws a `FixtureError`
 * listing every problem with the path of the bad field (e.g. `projects[0].gaps[3].prompt_text`).
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { isRecord } from '../../shared/util';

/** Objects keep their extra fields: a fixture's own fields are served as sent. */
const object = <T extends z.ZodRawShape>(shape: T, error = 'must be an object') => z.looseObject(shape, { error });
const list = <T extends z.ZodType>(item: T, error = 'must be an array') => z.array(item, { error });
const text = (error = 'must be a string') => z.string({ error });
const isNonBlank = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '';
const nonEmpty = (error = 'must be a non-empty string') => z.string({ error }).refine(isNonBlank, error);
/** Checks that run on a list even when some of its items are bad, so every problem is named at once. */
const ON_ANY_ARRAY = { when: (payload: { value: unknown }) => Array.isArray(payload.value) };

/** The items of a list whose `key` repeats an earlier item's. */
function uniqueBy(key: string, kind: string) {
  return (items: readonly unknown[], ctx: z.RefinementCtx): void => {
    const seen = new Set<string>();
    items.forEach((item, i) => {
      const id = isRecord(item) ? item[key] : undefined;
      if (!isNonBlank(id)) return;
      if (seen.has(id)) ctx.addIssue({ code: 'custom', path: [i, key], message: `duplicates the ${key} "${id}" of an earlier ${kind}` });
      seen.add(id);
    });
  };
}

const visibilitySchema = object(
  {
    metrics: list(
      object({
        label: nonEmpty(),
        value: z.union([z.string(), z.number(), z.boolean(), z.null()], { error: 'must be a string, number, boolean or null' }),
        caption: text('must be a string when present').optional(),
      }),
    ),
    // Per-engine rows, alerts and anything else: served as sent.
  },
  'must be an object with a "metrics" array',
);

const gapsSchema = list(
  object({
    prompt_id: nonEmpty(),
    prompt_ref: z.union([nonEmpty('must be a number or a non-empty string'), z.number()], {
      error: 'must be a number or a non-empty string',
    }),
    prompt_text: nonEmpty(),
    platforms_losing: z
      .array(z.unknown(), { error: 'must be an array of strings' })
      .refine((items): items is string[] => items.every((x) => typeof x === 'string'), 'must be an array of strings'),
    top_competitor: text(),
    // Other fields (e.g. `trend`): served as sent.
  }),
).superRefine(uniqueBy('prompt_id', 'gap'), ON_ANY_ARRAY);

const reasonSchema = object({ impact: text(), category: text(), detail: text() });

const projectSchema = object({
  id: nonEmpty(),
  name: nonEmpty(),
  industry: text(),
  visibility: visibilitySchema,
  gaps: gapsSchema,
  /**
   * Scripted runs: the Nth `advanceRun` (N = 1, 2, …) applies `runs[N-1]` instead of random drift: its
   * `visibility` and `gaps` replace the project's (what it omits stays), `answers` is the count
   * run.completed carries. Past the last scripted run the project drifts as usual.
   */
  runs: list(
    object(
      {
        visibility: visibilitySchema.optional(),
        gaps: gapsSchema.optional(),
        answers: z.int({ error: 'must be a whole number >= 0 when present' }).min(0, 'must be a whole number >= 0 when present').optional(),
      },
      'must be an object with "visibility", "gaps" and/or "answers"',
    ),
    'must be an array of scripted runs when present',
  ).optional(),
  /** Card id → card; a probe names its card here. */
  reasoning: z
    .record(z.string(), object({ reasons: list(reasonSchema) }, 'must be an object with a "reasons" array'), {
      error: 'must be an object of card id → card',
    })
    .optional(),
  probes: list(
    object({
      id: nonEmpty(),
      /** The question the result belongs to (the results route filters on it). */
      prompt_id: nonEmpty(),
      reasoning_card_id: nonEmpty('must be a non-empty string or null').nullable(),
    }),
  )
    .superRefine(uniqueBy('id', 'probe'), ON_ANY_ARRAY)
    .optional(),
});

/** Each probe's card is one of its project's reasoning cards. */
function cardReferences(projects: readonly unknown[], ctx: z.RefinementCtx): void {
  projects.forEach((project, p) => {
    if (!isRecord(project) || !Array.isArray(project['probes'])) return;
    const cards = isRecord(project['reasoning']) ? project['reasoning'] : {};
    project['probes'].forEach((probe: unknown, i) => {
      const card = isRecord(probe) ? probe['reasoning_card_id'] : undefined;
      if (isNonBlank(card) && !Object.hasOwn(cards, card))
        ctx.addIssue({
          code: 'custom',
          path: [p, 'probes', i, 'reasoning_card_id'],
          message: `names the card "${card}" that is not in projects[${p}].reasoning`,
        });
    });
  });
}

const fixtureSchema = object(
  {
    seed: z.int({ error: 'must be an integer when present' }).optional(),
    projects: list(projectSchema, 'must be a non-empty array')
      .superRefine(uniqueBy('id', 'project'), ON_ANY_ARRAY)
      .superRefine(cardReferences, ON_ANY_ARRAY)
      .refine((projects) => projects.length > 0, 'must be a non-empty array'),
  },
  'must be a JSON object with a "projects" array',
);

export type SimulatorFixture = z.infer<typeof fixtureSchema>;
export type FixtureProject = SimulatorFixture['projects'][number];
export type FixtureVisibility = FixtureProject['visibility'];
export type FixtureGap = FixtureProject['gaps'][number];
export type FixtureRun = NonNullable<FixtureProject['runs']>[number];
export type FixtureProbe = NonNullable<FixtureProject['probes']>[number];
export type FixtureReasoningCard = NonNullable<FixtureProject['reasoning']>[string];
export type FixtureReason = z.infer<typeof reasonSchema>;

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

/** `projects[0].gaps[3].prompt_text`; a card id (free text) as `reasoning["id"]`. */
function pathOf(path: readonly PropertyKey[]): string {
  if (path.length === 0) return '(root)';
  return path
    .map((key, i) => {
      if (typeof key === 'number') return `[${key}]`;
      return path[i - 1] === 'reasoning' ? `["${String(key)}"]` : `${i === 0 ? '' : '.'}${String(key)}`;
    })
    .join('');
}

/** Every problem of a would-be fixture, each as "<path>: <problem>"; empty when it is valid. */
export function fixtureIssues(value: unknown): string[] {
  const result = fixtureSchema.safeParse(value);
  return result.success ? [] : result.error.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`);
}

/** Checks a would-be fixture; returns it typed, or throws a `FixtureError` naming every bad field. */
export function validateFixture(value: unknown, source?: string): SimulatorFixture {
  const issues = fixtureIssues(value);
  if (issues.length > 0) throw new FixtureError(issues, source);
  return value as SimulatorFixture;
}

/** Reads and validates a fixture file; errors name the file and the bad field. */
export function loadFixtureFile(file: string): SimulatorFixture {
  let problem = 'cannot be read';
  let parsed: unknown;
  try {
    const text = readFileSync(file, 'utf8');
    problem = 'is not valid JSON';
    parsed = JSON.parse(text);
  } catch (error) {
    throw new FixtureError([`(file): ${problem} (${error instanceof Error ? error.message : String(error)})`], file);
  }
  return validateFixture(parsed, file);
}
