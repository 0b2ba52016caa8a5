/**
 * Metrics ↔ alarms on the real synthesized template (a production-like stage), real Powertools EMF
 * output (the functions' own observability adapter, stdout captured) and the real docs/DEPLOY.md.
 */
import { readFileSync } from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createObservability } from '../../shared/adapters/powertools';
import { DIGEST_METRICS, INGEST_METRICS, METRIC_DIMENSIONS, SERVICES } from '../../shared/contracts';
import {
  alarmCoverage,
  alarmMetrics,
  describeCoverage,
  emfMetrics,
  FAILURE_METRIC_NAMES,
  failureCoverage,
  metricFilterMatches,
  metricFilters,
  metricFromLogLine,
  unalarmedReasonsFrom,
  type MetricId,
} from '../../local/rehearse/alarm-coverage';
import { synthApp } from '../infra/helpers';

const { template } = synthApp({ development: false, alarmEmail: 'ops@example.com' }, { stage: 'prod' });
const json = template.toJSON();

/** Ref → the logical id, GetAtt → `<id>.<attribute>`: enough to name local resources distinctly. */
function resolve(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const node = value as Record<string, unknown>;
  if (typeof node.Ref === 'string') return node.Ref;
  const getAtt = node['Fn::GetAtt'];
  if (Array.isArray(getAtt)) return getAtt.join('.');
  return value;
}

const alarms = alarmMetrics(json, resolve);
const deployMd = readFileSync(new URL('../../docs/DEPLOY.md', import.meta.url), 'utf8');
const PREFIX = 'VisibilitySlackBridge-prod-';
const custom = (service: string, name: string, stage = 'prod', extra: Record<string, string> = {}): MetricId => ({
  namespace: 'VisibilitySlackBridge',
  name,
  dimensions: { service, stage, ...extra },
});
const metricsOf = (id: string): MetricId[] => alarms.filter((a) => a.alarm === `${PREFIX}${id}`).map((a) => a.metric);
const logicalIdOf = (prefix: string): string => Object.keys(json.Resources as object).find((id) => id.startsWith(prefix))!;

/** The EMF lines the functions' Powertools adapter prints for these counts. */
function emfLinesOf(
  service: string,
  stage: string,
  counts: (metrics: ReturnType<typeof createObservability>['metrics']) => void,
): string[] {
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  try {
    const observability = createObservability(service, stage);
    counts(observability.metrics);
    observability.flush();
  } finally {
    write.mockRestore();
  }
  return lines;
}

afterEach(() => vi.restoreAllMocks());

describe('alarmMetrics', () => {
  it('lists every alarm of the template with the metrics it reads, dimensions resolved', () => {
    const alarmIds = Object.keys(template.findResources('AWS::CloudWatch::Alarm'));
    expect(new Set(alarms.map((a) => a.logicalId))).toEqual(new Set(alarmIds));
    expect(metricsOf('SigningSecretsInvalid')).toEqual([custom('ingest', 'SigningSecretsInvalid')]);
    expect(metricsOf('DlqNotEmpty')).toEqual([
      {
        namespace: 'AWS/SQS',
        name: 'ApproximateNumberOfMessagesVisible',
        dimensions: { QueueName: `${logicalIdOf('DigestDlq')}.QueueName` },
      },
    ]);
  });

  it('reads each metric of a math alarm, not its expressions', () => {
    expect(metricsOf('NonSignatureRejections')).toEqual(
      expect.arrayContaining([custom('ingest', 'DeliveryRejected'), custom('ingest', 'SignatureRejected')]),
    );
    expect(
      metricsOf('UndeliveredDigests')
        .map((m) => m.name)
        .sort(),
    ).toEqual(['DigestPosted', 'EventDuplicate', 'EventSuperseded', 'RunCompletedAccepted', 'RunMuted']);
    const api = metricsOf('Api5xxRate');
    expect(api.map((m) => `${m.namespace} ${m.name}`).sort()).toEqual(['AWS/ApiGateway 5xx', 'AWS/ApiGateway Count']);
    expect(Object.keys(api[0]!.dimensions)).toContain('ApiId');
  });

  it('says what is wrong with a template it cannot read', () => {
    expect(() => alarmMetrics({}, resolve)).toThrow('no Resources object');
    const unresolved = {
      Resources: {
        A: {
          Type: 'AWS::CloudWatch::Alarm',
          Properties: { Namespace: 'N', MetricName: 'M', Dimensions: [{ Name: 'QueueName', Value: { 'Fn::Sub': 'x' } }] },
        },
      },
    };
    expect(() => alarmMetrics(unresolved, resolve)).toThrow('dimension');
  });
});

describe('emfMetrics', () => {
  it('reads the metrics Powertools prints, with the breakdown record beside the total', () => {
    const lines = emfLinesOf(SERVICES.ingest, 'prod', (metrics) => {
      metrics.count(INGEST_METRICS.deliveryRejected, 1, { [METRIC_DIMENSIONS.reason]: 'payload_too_large' });
      metrics.count(INGEST_METRICS.signingSecretsInvalid);
    });
    expect(lines.length).toBeGreaterThan(0);
    const emitted = emfMetrics(['START RequestId: 1 Version: $LATEST', '{"level":"INFO","message":"not EMF"}', ...lines]);
    expect(emitted).toEqual(
      expect.arrayContaining([
        custom('ingest', 'DeliveryRejected'),
        custom('ingest', 'DeliveryRejected', 'prod', { reason: 'payload_too_large' }),
        custom('ingest', 'SigningSecretsInvalid'),
      ]),
    );
    expect(emitted.every((m) => m.namespace === 'VisibilitySlackBridge')).toBe(true);
  });

  it("skips a prefix such as the Lambda runtime's timestamp and request id", () => {
    const [line] = emfLinesOf(SERVICES.digest, 'prod', (metrics) => metrics.count(DIGEST_METRICS.batchItemFailed, 2));
    expect(emfMetrics([`2024-01-01T00:00:00.000Z\tabc\tINFO\t${line}`])).toEqual([custom('digest', 'BatchItemFailed')]);
  });

  it('throws on an EMF object CloudWatch would reject, naming why', () => {
    const missingDimension = JSON.stringify({
      _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [['service']], Metrics: [{ Name: 'M' }] }] },
      M: 1,
    });
    expect(() => emfMetrics([missingDimension])).toThrow('dimension service of M has no string value');
    const missingValue = JSON.stringify({
      _aws: { Timestamp: 0, CloudWatchMetrics: [{ Namespace: 'N', Dimensions: [[]], Metrics: [{ Name: 'M' }] }] },
    });
    expect(() => emfMetrics([missingValue])).toThrow('metric M has no value');
  });
});

describe('metric filters', () => {
  const filters = metricFilters(json, resolve);
  const accessLine = (status: string, stage = 'prod', routeKey = 'POST /webhook'): string =>
    JSON.stringify({ requestId: 'r', status, routeKey, service: 'webhook-api', bridgeStage: stage });

  it('the throttled count: its log group, pattern and metric, with dimensions taken from each access line', () => {
    expect(filters).toHaveLength(1);
    const [filter] = filters;
    expect(filter).toMatchObject({ pattern: expect.stringContaining('$.status = "429"') as unknown, metric: { name: 'WebhookThrottled' } });
    expect(filter!.logGroup).toMatch(/AccessLogs/);
    expect(metricFromLogLine(filter!, accessLine('429'))).toEqual(custom('webhook-api', 'WebhookThrottled'));
    expect(metricFromLogLine(filter!, accessLine('200'))).toBeUndefined();
    // Throttled before routing (a path the API does not route) still counts: the flood took the stage's tokens.
    expect(metricFromLogLine(filter!, accessLine('429', 'prod', '-'))).toEqual(custom('webhook-api', 'WebhookThrottled'));
  });

  it('a 429 of the Slack routes’ own throttle is not the webhook’s', () => {
    const [filter] = filters;
    for (const route of ['POST /slack/commands', 'POST /slack/interactions']) {
      expect(metricFromLogLine(filter!, accessLine('429', 'prod', route))).toBeUndefined();
    }
  });

  it('a 429 line feeds the WebhookThrottled alarm; one from another stage does not', () => {
    const filter = filters[0]!;
    const fed = alarmCoverage({ alarms, emitted: [metricFromLogLine(filter, accessLine('429'))!], unalarmedReasons: {} });
    expect(fed.silentAlarms.map((a) => a.alarm)).not.toContain(`${PREFIX}WebhookThrottled`);
    const elsewhere = alarmCoverage({ alarms, emitted: [metricFromLogLine(filter, accessLine('429', 'dev'))!], unalarmedReasons: {} });
    expect(elsewhere.silentAlarms.map((a) => a.alarm)).toContain(`${PREFIX}WebhookThrottled`);
  });

  it.each([
    ['{ $.status = "429" }', { status: '429' }, true],
    ['{ $.status = "429" }', { status: 429 }, false],
    ['{ $.status = 429 }', { status: 429 }, true],
    ['{ $.status = 429 }', { status: '429' }, false],
    ['{ $.status != "200" }', { status: '503' }, true],
    ['{ $.status != "200" }', {}, false],
    ['{ $.latency >= 1000 }', { latency: 1000 }, true],
    ['{ $.latency < 1000 }', { latency: 1000 }, false],
    ['{ $.ip = 10.0.* }', { ip: '10.0.3.4' }, true],
    ['{ $.ip = "10.0.*" }', { ip: '10.1.3.4' }, false],
    ['{ $.route = %^POST /web% }', { route: 'POST /webhook' }, true],
    ['{ $.a.b[1] = "x" }', { a: { b: ['w', 'x'] } }, true],
    ['{ ($.status = "429" || $.status = "503") && $.service = "webhook-api" }', { status: '503', service: 'webhook-api' }, true],
    ['{ ($.status = "429" || $.status = "503") && $.service = "webhook-api" }', { status: '503', service: 'other' }, false],
    ['{ $.error IS TRUE }', { error: true }, true],
    ['{ $.error IS NULL }', { error: false }, false],
    ['{ $.error NOT EXISTS }', {}, true],
    ['{ $.error NOT EXISTS }', { error: null }, false],
  ])('%s on %j → %s', (pattern, event, expected) => {
    expect(metricFilterMatches(pattern, JSON.stringify(event))).toBe(expected);
  });

  it('never matches a line that is not a JSON object, and refuses patterns it cannot read', () => {
    expect(metricFilterMatches('{ $.status = "429" }', 'status 429')).toBe(false);
    expect(() => metricFilterMatches('[ip, user, status=429]', '{}')).toThrow('only JSON patterns');
    expect(() => metricFilterMatches('{ $.status ~ 429 }', '{}')).toThrow('unsupported operator');
    expect(() => metricFilterMatches('{ ($.status = 1 }', '{}')).toThrow();
  });
});

describe('unalarmedReasonsFrom', () => {
  it('reads the table in docs/DEPLOY.md', () => {
    const reasons = unalarmedReasonsFrom(deployMd);
    expect(Object.keys(reasons).sort()).toEqual([
      'ActionSigningKeyUnusable',
      'ChartFailed',
      'ConnectionNotInstalled',
      'DigestChannelRefused',
      'DigestFailed',
      'IngestUnavailable',
      'QuietCatchUpFailed',
      'SlackActionRefused',
      'SlackRequestReplayed',
    ]);
    expect(reasons.DigestFailed).toContain('BatchItemFailed');
  });

  it('says what to fix in a table it cannot read', () => {
    const table = (rows: string): string =>
      `# Doc\n\n### Metrics without an alarm\n\n| Metric | Why |\n| --- | --- |\n${rows}\n\n## Next\n`;
    expect(unalarmedReasonsFrom(table('| `A` | because |'))).toEqual({ A: 'because' });
    expect(() => unalarmedReasonsFrom('# Doc\n')).toThrow('no "Metrics without an alarm" heading');
    expect(() => unalarmedReasonsFrom(table('| `A` |  |'))).toThrow('A has no reason');
    expect(() => unalarmedReasonsFrom(table('| `A` | x |\n| `A` | y |'))).toThrow('A is listed twice');
    expect(() => unalarmedReasonsFrom(table('| not a name | x |'))).toThrow('does not start with a metric name');
  });
});

describe('failure metrics', () => {
  it('are the failure entries of the typed table in shared/contracts.ts', () => {
    expect(FAILURE_METRIC_NAMES).toEqual(
      expect.arrayContaining(['BatchItemFailed', 'SigningSecretsInvalid', 'SigningSecretsUnreadable', 'WebhookThrottled']),
    );
    expect(FAILURE_METRIC_NAMES).not.toContain('DeliveryAccepted');
    expect(FAILURE_METRIC_NAMES).not.toContain('RunMuted');
  });

  it('each has an alarm in the template or a reason in docs/DEPLOY.md, and no reason is needless', () => {
    expect(failureCoverage(alarms, unalarmedReasonsFrom(deployMd))).toEqual({ unwatched: [], needlessReasons: [] });
  });

  it('a failure metric whose alarm is gone, and a reason for an alarmed metric, are both reported', () => {
    const without = alarms.filter((a) => a.metric.name !== 'SigningSecretsInvalid');
    expect(failureCoverage(without, { ...unalarmedReasonsFrom(deployMd), BatchItemFailed: 'z' })).toEqual({
      unwatched: ['SigningSecretsInvalid'],
      needlessReasons: ['BatchItemFailed'],
    });
  });
});

describe('alarmCoverage', () => {
  const reasons = unalarmedReasonsFrom(deployMd);

  it('an alarm is fed by an emitted metric with its exact dimensions; the others are silent', () => {
    const emitted = emfMetrics(emfLinesOf(SERVICES.ingest, 'prod', (metrics) => metrics.count(INGEST_METRICS.signingSecretsInvalid)));
    const { silentAlarms, unwatchedFailures } = alarmCoverage({ alarms, emitted, unalarmedReasons: reasons });
    const silent = silentAlarms.map((a) => a.alarm);
    expect(silent).not.toContain(`${PREFIX}SigningSecretsInvalid`);
    expect(silent).toContain(`${PREFIX}SigningSecretsUnreadable`);
    expect(silent).toContain(`${PREFIX}DlqNotEmpty`);
    expect(unwatchedFailures).toEqual([]);
  });

  it('a failure metric emitted under the wrong stage leaves its alarm silent and is itself unwatched', () => {
    const emitted = emfMetrics(emfLinesOf(SERVICES.ingest, 'default', (metrics) => metrics.count(INGEST_METRICS.signingSecretsInvalid)));
    const coverage = alarmCoverage({ alarms, emitted, unalarmedReasons: reasons });
    expect(coverage.silentAlarms.map((a) => a.alarm)).toContain(`${PREFIX}SigningSecretsInvalid`);
    expect(coverage.unwatchedFailures).toEqual([custom('ingest', 'SigningSecretsInvalid', 'default')]);
    expect(describeCoverage(coverage).join('\n')).toContain(
      'failure metric VisibilitySlackBridge SigningSecretsInvalid {service=ingest, stage=default} is emitted but no alarm reads it',
    );
  });

  it('a breakdown by reason is watched through its total; a listed reason or a non-failure metric needs no alarm', () => {
    const emitted = emfMetrics(
      emfLinesOf(SERVICES.ingest, 'prod', (metrics) => {
        metrics.count(INGEST_METRICS.deliveryRejected, 1, { [METRIC_DIMENSIONS.reason]: 'store_unavailable' });
        metrics.count(INGEST_METRICS.ingestUnavailable);
        metrics.count(INGEST_METRICS.deliveryAccepted);
      }),
    );
    const coverage = alarmCoverage({ alarms, emitted, unalarmedReasons: reasons });
    expect(coverage.silentAlarms.map((a) => a.alarm)).not.toContain(`${PREFIX}NonSignatureRejections`);
    expect(coverage.unwatchedFailures).toEqual([]);
    expect(alarmCoverage({ alarms, emitted, unalarmedReasons: {} }).unwatchedFailures).toEqual([custom('ingest', 'IngestUnavailable')]);
  });

  it('platform metrics the runner adds feed the AWS-namespace alarms', () => {
    const dlq: MetricId = {
      namespace: 'AWS/SQS',
      name: 'ApproximateNumberOfMessagesVisible',
      dimensions: { QueueName: `${logicalIdOf('DigestDlq')}.QueueName` },
    };
    const coverage = alarmCoverage({ alarms, emitted: [dlq, dlq], unalarmedReasons: reasons });
    expect(coverage.silentAlarms.map((a) => a.alarm)).not.toContain(`${PREFIX}DlqNotEmpty`);
    expect(coverage.unwatchedFailures).toEqual([]);
    expect(describeCoverage(coverage)[0]).toMatch(/^alarm VisibilitySlackBridge-prod-\w+ can never fire: none of its metrics was emitted/);
  });
});
