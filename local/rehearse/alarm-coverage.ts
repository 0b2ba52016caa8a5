/**
 * Metrics ↔ alarms, both ways, for the deploy rehearsal: the metrics each alarm of a synthesized
 * template reads, the metrics the functions really emitted (their EMF lines, and the access-log lines
 * the stack's metric filters count), and the two gaps between them — an alarm none of whose metrics
 * was emitted (it can never fire), and an emitted failure metric no alarm reads and docs/DEPLOY.md
 * gives no reason for (a failure nobody hears about).
 *
 * Matching follows CloudWatch: a metric is its namespace, name and exact set of dimensions, so a
 * metric emitted with the wrong `stage` does not feed the stage's alarm.
 */
import { COUNTS_A_FAILURE, METRICS_NAMESPACE } from '../../shared/contracts';
import { asArray, asRecord, isRecord, parseJsonOrUndefined } from '../../shared/util';
import { resourcesOfType } from './assembly';

export interface MetricId {
  namespace: string;
  name: string;
  dimensions: Readonly<Record<string, string>>;
}

/** One metric an alarm reads (an alarm on metric math reads several). */
export interface AlarmMetric {
  /** AlarmName when it resolves to a string, else the logical id. */
  alarm: string;
  logicalId: string;
  metric: MetricId;
}

/** A metric filter of the template. Dimension values may be JSON selectors (`$.service`), filled per log line. */
export interface MetricFilter {
  logicalId: string;
  logGroup: string;
  pattern: string;
  metric: MetricId;
}

export interface SilentAlarm {
  alarm: string;
  metrics: MetricId[];
}

export interface AlarmCoverage {
  /** Alarms none of whose metrics was emitted. */
  silentAlarms: SilentAlarm[];
  /** Emitted failure metrics that no alarm reads and that have no reason in docs/DEPLOY.md. */
  unwatchedFailures: MetricId[];
}

type Resolve = (value: unknown) => unknown;
type Json = Record<string, unknown>;

/** Names of the custom metrics that count a failure (from the typed table in shared/contracts.ts). */
export const FAILURE_METRIC_NAMES: readonly string[] = Object.entries(COUNTS_A_FAILURE)
  .filter(([, failure]) => failure)
  .map(([name]) => name)
  .sort();

/** The heading of the docs/DEPLOY.md table `unalarmedReasonsFrom` reads. */
export const UNALARMED_HEADING = 'Metrics without an alarm';

// --- the template ------------------------------------------------------------------------------

/** Every metric each AWS::CloudWatch::Alarm reads: its single metric, or each MetricStat of its Metrics[] math. */
export function alarmMetrics(template: unknown, resolve: Resolve): AlarmMetric[] {
  return propertiesOfType(template, 'AWS::CloudWatch::Alarm').flatMap(([logicalId, props]) => {
    const alarmName = resolve(props.AlarmName);
    const alarm = typeof alarmName === 'string' ? alarmName : logicalId;
    return alarmMetricIds(logicalId, props, resolve).map((metric) => ({ alarm, logicalId, metric }));
  });
}

function alarmMetricIds(logicalId: string, props: Json, resolve: Resolve): MetricId[] {
  if (props.MetricName !== undefined) return [metricId(logicalId, props, resolve)];
  if (!Array.isArray(props.Metrics)) throw new Error(`alarm ${logicalId}: neither MetricName nor Metrics[]`);
  // An expression has no MetricStat: it reads the MetricStat entries beside it.
  const stats = props.Metrics.map((query: unknown) => asRecord(query).MetricStat).filter(isRecord);
  return stats.map((stat) => metricId(logicalId, asRecord(stat.Metric), resolve));
}

/** The metric of an alarm, a MetricStat or (its Namespace as MetricNamespace) a metric filter's transformation. */
function metricId(owner: string, { Namespace: namespace, MetricName: name, Dimensions: dimensions }: Json, resolve: Resolve): MetricId {
  const ns = resolve(namespace);
  const metricName = resolve(name);
  if (typeof ns !== 'string' || typeof metricName !== 'string') {
    throw new Error(`${owner}: a metric without a string Namespace and MetricName (${JSON.stringify({ namespace, name })})`);
  }
  const dims: Record<string, string> = {};
  for (const dimension of asArray(dimensions)) {
    const { Name, Key, Value } = asRecord(dimension);
    const key = Name ?? Key;
    const value = resolve(Value);
    if (typeof key !== 'string' || typeof value !== 'string') {
      throw new Error(`${owner}: dimension ${JSON.stringify(dimension)} of ${metricName} does not resolve to a string`);
    }
    dims[key] = value;
  }
  return { namespace: ns, name: metricName, dimensions: dims };
}

/** The AWS::Logs::MetricFilter resources: log group, JSON pattern and the metric each match adds to. */
export function metricFilters(template: unknown, resolve: Resolve): MetricFilter[] {
  return propertiesOfType(template, 'AWS::Logs::MetricFilter').flatMap(([logicalId, props]) => {
    const logGroup = resolve(props.LogGroupName);
    const pattern = resolve(props.FilterPattern);
    if (typeof logGroup !== 'string' || typeof pattern !== 'string') {
      throw new Error(`metric filter ${logicalId}: LogGroupName and FilterPattern must resolve to strings`);
    }
    return asArray(props.MetricTransformations).map((t) => {
      const metric = metricId(logicalId, { ...asRecord(t), Namespace: asRecord(t).MetricNamespace }, resolve);
      return { logicalId, logGroup, pattern, metric };
    });
  });
}

/** The properties of each resource of one type, with its logical id. */
function propertiesOfType(template: unknown, type: string): [string, Json][] {
  return resourcesOfType(template, type).map(([logicalId, resource]) => [logicalId, asRecord(resource.Properties)]);
}

// --- what was emitted --------------------------------------------------------------------------

/**
 * The metrics in CloudWatch EMF lines as Powertools prints them (one JSON object per line with
 * `_aws.CloudWatchMetrics`); a prefix before the object (Lambda's timestamp and request id) is
 * skipped, and other lines are ignored. An EMF object CloudWatch would reject throws, naming why.
 */
export function emfMetrics(lines: readonly string[]): MetricId[] {
  return lines.flatMap((line) => {
    const start = line.indexOf('{');
    const parsed = start < 0 ? undefined : parseJsonOrUndefined(line.slice(start));
    if (!isRecord(parsed) || !isRecord(parsed._aws) || !Array.isArray(parsed._aws.CloudWatchMetrics)) return [];
    return parsed._aws.CloudWatchMetrics.flatMap((directive: unknown) => directiveMetrics(directive, parsed));
  });
}

function directiveMetrics(directive: unknown, values: Json): MetricId[] {
  const fail = (why: string): never => {
    throw new Error(`EMF line rejected by CloudWatch: ${why} (${JSON.stringify(values).slice(0, 300)})`);
  };
  if (!isRecord(directive) || typeof directive.Namespace !== 'string') return fail('a CloudWatchMetrics entry without a Namespace');
  const namespace = directive.Namespace;
  const sets = Array.isArray(directive.Dimensions) && directive.Dimensions.length > 0 ? directive.Dimensions : [[]];
  const metrics = Array.isArray(directive.Metrics) ? directive.Metrics : fail('a CloudWatchMetrics entry without Metrics');
  return metrics.flatMap((definition: unknown) => {
    const name = isRecord(definition) ? definition.Name : undefined;
    if (typeof name !== 'string') return fail('a metric without a Name');
    if (values[name] === undefined) return fail(`metric ${name} has no value`);
    return sets.map((set: unknown) => {
      const dimensions: Record<string, string> = {};
      for (const key of Array.isArray(set) ? set : fail('a dimension set that is not an array')) {
        const value = typeof key === 'string' ? values[key] : undefined;
        if (typeof value !== 'string') return fail(`dimension ${String(key)} of ${name} has no string value`);
        dimensions[key as string] = value;
      }
      return { namespace, name, dimensions };
    });
  });
}

/** The metric a metric filter adds to for one log line, or undefined when the line doesn't match (or lacks a dimension field). */
export function metricFromLogLine(filter: MetricFilter, jsonLine: string): MetricId | undefined {
  if (!metricFilterMatches(filter.pattern, jsonLine)) return undefined;
  const event = parseJsonOrUndefined(jsonLine);
  const dimensions: Record<string, string> = {};
  for (const [key, value] of Object.entries(filter.metric.dimensions)) {
    const field = value.startsWith('$') ? select(event, parseSelector(value)) : value;
    if (typeof field !== 'string' && typeof field !== 'number' && typeof field !== 'boolean') return undefined;
    dimensions[key] = String(field);
  }
  return { ...filter.metric, dimensions };
}

// --- metric filter patterns --------------------------------------------------------------------

type Condition = (event: unknown) => boolean;

/**
 * Whether a JSON log event matches a CloudWatch Logs JSON filter pattern such as `{ $.status = "429" }`:
 * `= != < > <= >=` against a quoted or bare string (with `*` wildcards), a number or a `%regex%`;
 * `IS TRUE|FALSE|NULL`, `NOT EXISTS`; `&&`, `||` and parentheses. A string compares with string
 * fields and a number with number fields; a missing field matches nothing but NOT EXISTS. A line
 * that is not a JSON object never matches. Other pattern syntax throws rather than guess.
 */
export function metricFilterMatches(pattern: string, jsonLine: string): boolean {
  const condition = compilePattern(pattern);
  const event = parseJsonOrUndefined(jsonLine);
  return isRecord(event) && condition(event);
}

const TOKEN = /\s*(\(|\)|&&|\|\||!=|<=|>=|=|<|>|"(?:[^"\\]|\\.)*"|%[^%]*%|[^\s()&|!=<>"]+)/y;

function compilePattern(pattern: string): Condition {
  const text = pattern.trim();
  if (!text.startsWith('{') || !text.endsWith('}')) {
    throw new Error(`unsupported metric filter pattern ${JSON.stringify(pattern)}: only JSON patterns ({ … }) are supported`);
  }
  const fail = (why: string): never => {
    throw new Error(`metric filter pattern ${JSON.stringify(pattern)}: ${why}`);
  };
  const body = text.slice(1, -1);
  const tokens: string[] = [];
  for (TOKEN.lastIndex = 0; body.slice(TOKEN.lastIndex).trim() !== '';) {
    tokens.push(TOKEN.exec(body)?.[1] ?? fail(`cannot read it from position ${TOKEN.lastIndex}`));
  }
  let at = 0;
  const peek = (): string | undefined => tokens[at];
  const next = (): string => tokens[at++] ?? fail('it ends too early');
  // `a || b` and `a && b`: a list of parts joined by one operator (&& binds tighter).
  const joined = (operator: string, part: () => Condition, test: 'some' | 'every') => (): Condition => {
    const parts = [part()];
    while (peek() === operator) {
      at++;
      parts.push(part());
    }
    return (event) => parts[test]((p) => p(event));
  };
  const comparison = (): Condition => {
    const path = parseSelector(next());
    const operator = next();
    if (operator === 'IS') {
      const literal = next();
      const expected = ({ TRUE: true, FALSE: false, NULL: null } as Record<string, boolean | null>)[literal];
      if (expected === undefined) fail(`IS ${literal} (TRUE, FALSE or NULL)`);
      return (event) => select(event, path) === expected;
    }
    if (operator === 'NOT' && peek() === 'EXISTS') {
      next();
      return (event) => select(event, path) === undefined;
    }
    if (!(operator in COMPARE)) fail(`unsupported operator ${JSON.stringify(operator)}`);
    const test = valueTest(next(), operator, fail);
    return (event) => {
      const field = select(event, path);
      return field !== undefined && test(field);
    };
  };
  const and = joined('&&', () => unary(), 'every');
  const or = joined('||', and, 'some');
  const unary = (): Condition => {
    if (peek() !== '(') return comparison();
    at++;
    const inner = or();
    return next() === ')' ? inner : fail('unbalanced parentheses');
  };
  const condition = or();
  return at === tokens.length ? condition : fail(`unexpected ${JSON.stringify(peek())}`);
}

function valueTest(literal: string, operator: string, fail: (why: string) => never): (field: unknown) => boolean {
  const negate = operator === '!=';
  if (literal.length > 1 && literal.startsWith('%') && literal.endsWith('%')) {
    const regex = new RegExp(literal.slice(1, -1));
    return (field) => typeof field === 'string' && regex.test(field) !== negate;
  }
  const number = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/.test(literal) ? Number(literal) : undefined;
  if (number !== undefined) return (field) => typeof field === 'number' && COMPARE[operator]!(field, number);
  if (operator !== '=' && operator !== '!=') fail(`${operator} needs a number, not ${literal}`);
  const text = literal.startsWith('"') ? (JSON.parse(literal) as string) : literal;
  const wildcard = new RegExp(`^${text.split('*').map(escapeRegExp).join('.*')}$`);
  return (field) => typeof field === 'string' && wildcard.test(field) !== negate;
}

const COMPARE: Record<string, (field: number, value: number) => boolean> = {
  '=': (field, value) => field === value,
  '!=': (field, value) => field !== value,
  '<': (field, value) => field < value,
  '>': (field, value) => field > value,
  '<=': (field, value) => field <= value,
  '>=': (field, value) => field >= value,
};

type PathStep = string | number;

/** `$.a.b[0]` → ['a', 'b', 0]. */
function parseSelector(text: string): PathStep[] {
  if (!/^\$(\.[A-Za-z_][\w-]*|\[\d+\])+$/.test(text))
    throw new Error(`unsupported JSON selector ${JSON.stringify(text)} (use $.field.sub[0])`);
  return [...text.matchAll(/\.([A-Za-z_][\w-]*)|\[(\d+)\]/g)].map((m) => (m[1] !== undefined ? m[1] : Number(m[2])));
}

function select(value: unknown, path: readonly PathStep[]): unknown {
  let current = value;
  for (const step of path) {
    if (typeof step === 'number' ? !Array.isArray(current) : !isRecord(current)) return undefined;
    current = (current as Record<string | number, unknown>)[step];
  }
  return current;
}

// --- the reasons in docs/DEPLOY.md ---------------------------------------------------------------

/** Parses the "Metrics without an alarm" table of docs/DEPLOY.md: metric name → one-line reason. */
export function unalarmedReasonsFrom(markdown: string): Record<string, string> {
  const lines = markdown.split(/\r?\n/);
  const heading = lines.findIndex((line) => new RegExp(`^#{2,6}\\s+${UNALARMED_HEADING}\\s*$`, 'i').test(line));
  if (heading < 0) throw new Error(`no "${UNALARMED_HEADING}" heading: add one with a table | Metric | Why no alarm |`);
  const rows: string[] = [];
  for (const line of lines.slice(heading + 1)) {
    if (line.trim().startsWith('|')) rows.push(line.trim());
    else if (rows.length > 0 || line.startsWith('#')) break;
  }
  if (rows.length < 2) throw new Error(`"${UNALARMED_HEADING}" has no table under it`);
  const reasons: Record<string, string> = {};
  for (const row of rows.slice(2)) {
    const cells = row
      .replace(/^\||\|$/g, '')
      .split('|')
      .map((cell) => cell.trim());
    const name = (cells[0] ?? '').replace(/`/g, '');
    const reason = cells.slice(1).join('|').trim();
    if (!/^[A-Za-z][A-Za-z0-9]*$/.test(name))
      throw new Error(`"${UNALARMED_HEADING}": ${JSON.stringify(row)} does not start with a metric name`);
    if (reason === '') throw new Error(`"${UNALARMED_HEADING}": ${name} has no reason`);
    if (name in reasons) throw new Error(`"${UNALARMED_HEADING}": ${name} is listed twice`);
    reasons[name] = reason;
  }
  return reasons;
}

// --- coverage ----------------------------------------------------------------------------------

export interface CoverageInput {
  alarms: readonly AlarmMetric[];
  /** EMF metrics, metric-filter metrics and the runner's synthetic AWS-namespace ("platform") metrics. */
  emitted: readonly MetricId[];
  unalarmedReasons: Readonly<Record<string, string>>;
}

export function alarmCoverage(input: CoverageInput): AlarmCoverage {
  const emitted = [...new Map(input.emitted.map((metric) => [metricKey(metric), metric])).values()];
  const byAlarm = new Map<string, MetricId[]>();
  for (const { alarm, metric } of input.alarms) byAlarm.set(alarm, [...(byAlarm.get(alarm) ?? []), metric]);
  const silentAlarms = [...byAlarm]
    .filter(([, metrics]) => !metrics.some((metric) => emitted.some((e) => metricKey(e) === metricKey(metric))))
    .map(([alarm, metrics]) => ({ alarm, metrics }));
  const unwatchedFailures = emitted.filter(
    (metric) => isFailureMetric(metric) && !(metric.name in input.unalarmedReasons) && !input.alarms.some((a) => watches(a.metric, metric)),
  );
  return { silentAlarms, unwatchedFailures };
}

/**
 * The same check without a run: failure metric names no alarm reads (by name) and no reason covers,
 * and reasons listed for metrics that need none (alarmed, or not a failure metric).
 */
export function failureCoverage(
  alarms: readonly AlarmMetric[],
  unalarmedReasons: Readonly<Record<string, string>>,
): { unwatched: string[]; needlessReasons: string[] } {
  const alarmed = new Set(alarms.filter((a) => a.metric.namespace === METRICS_NAMESPACE).map((a) => a.metric.name));
  return {
    unwatched: FAILURE_METRIC_NAMES.filter((name) => !alarmed.has(name) && !(name in unalarmedReasons)),
    needlessReasons: Object.keys(unalarmedReasons).filter((name) => alarmed.has(name) || !FAILURE_METRIC_NAMES.includes(name)),
  };
}

/** Lines for a report: what is wrong and what to do. Empty when both directions are covered. */
export function describeCoverage(coverage: AlarmCoverage): string[] {
  return [
    ...coverage.silentAlarms.map(
      ({ alarm, metrics }) =>
        `alarm ${alarm} can never fire: none of its metrics was emitted (${metrics.map(formatMetric).join('; ')}); emit it, fix its dimensions, or add a fault scenario that does`,
    ),
    ...coverage.unwatchedFailures.map(
      (metric) =>
        `failure metric ${formatMetric(metric)} is emitted but no alarm reads it: add an alarm, or a row to "${UNALARMED_HEADING}" in docs/DEPLOY.md saying why not`,
    ),
  ];
}

export function formatMetric(metric: MetricId): string {
  const dims = Object.entries(metric.dimensions)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([key, value]) => `${key}=${value}`)
    .join(', ');
  return `${metric.namespace} ${metric.name} {${dims}}`;
}

/** By the table in shared/contracts.ts; a custom metric the table doesn't know counts as a failure. */
function isFailureMetric(metric: MetricId): boolean {
  if (metric.namespace !== METRICS_NAMESPACE) return false;
  const known = (COUNTS_A_FAILURE as Readonly<Record<string, boolean>>)[metric.name];
  return known ?? true;
}

/** CloudWatch's identity of a metric: namespace, name and the exact dimension set. */
function metricKey(metric: MetricId): string {
  const dimensions = Object.entries(metric.dimensions).sort(([a], [b]) => a.localeCompare(b));
  return JSON.stringify([metric.namespace, metric.name, dimensions]);
}

/**
 * An alarm watches an emitted metric with its dimensions or a breakdown of it: Powertools emits a
 * count split by `reason` as its own record beside the total the alarm reads.
 */
function watches(alarmed: MetricId, emitted: MetricId): boolean {
  return (
    alarmed.namespace === emitted.namespace &&
    alarmed.name === emitted.name &&
    Object.entries(alarmed.dimensions).every(([key, value]) => emitted.dimensions[key] === value)
  );
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
