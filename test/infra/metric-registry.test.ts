/**
 * The metrics registry (METRIC_REGISTRY in shared/contracts.ts) against the stack: every alarm it
 * names exists and reads that metric from one of its emitters, every failure metric is alarmed or
 * has its reason in docs/DEPLOY.md, and no alarm reads a custom metric the registry does not tie to it.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { METRIC_DIMENSIONS, METRIC_REGISTRY, METRICS_NAMESPACE, type AnyMetricName } from '../../shared/contracts';
import { synthApp } from './helpers';

const { template } = synthApp({ development: false, alarmEmail: 'ops@example.com' }, { stage: 'prod' });

interface MetricRef {
  Namespace?: string;
  MetricName?: string;
  Dimensions?: { Name: string; Value: unknown }[];
}
interface AlarmProps extends MetricRef {
  AlarmName: unknown;
  Metrics?: { MetricStat?: { Metric: MetricRef } }[];
}

/** Alarms by their id (the AlarmName is `<stack>-<id>`), with the custom metrics each reads and their `service`. */
function customMetricsByAlarm(): Map<string, { name: string; service: unknown }[]> {
  const alarms = template.findResources('AWS::CloudWatch::Alarm') as Record<string, { Properties: AlarmProps }>;
  const byId = new Map<string, { name: string; service: unknown }[]>();
  for (const { Properties: alarm } of Object.values(alarms)) {
    const name = JSON.stringify(alarm.AlarmName);
    const id = /-([A-Za-z0-9]+)"\]*\]?\}?$/.exec(name.replace(/\\"/g, '"'))?.[1] ?? name;
    const refs = [alarm, ...(alarm.Metrics ?? []).map((m) => m.MetricStat?.Metric ?? {})];
    const custom = refs
      .filter((ref) => ref.Namespace === METRICS_NAMESPACE && ref.MetricName !== undefined)
      .map((ref) => ({
        name: ref.MetricName ?? '',
        service: ref.Dimensions?.find((d) => d.Name === METRIC_DIMENSIONS.service)?.Value,
      }));
    byId.set(id, custom);
  }
  return byId;
}

const alarms = customMetricsByAlarm();
const entries = Object.entries(METRIC_REGISTRY) as [AnyMetricName, (typeof METRIC_REGISTRY)[AnyMetricName]][];

describe('metric registry', () => {
  it.each(entries.filter(([, spec]) => spec.alarms.length > 0))(
    '%s feeds the alarms it names, from one of its emitters',
    (metric, spec) => {
      for (const id of spec.alarms) {
        const reads = alarms.get(id);
        expect(reads, `alarm ${id}`).toBeDefined();
        const mine = (reads ?? []).filter((read) => read.name === metric);
        expect(mine.length, `${id} reads ${metric}`).toBeGreaterThan(0);
        for (const read of mine) expect(spec.emitters).toContain(read.service);
      }
    },
  );

  it('names every alarm that reads a custom metric', () => {
    for (const [id, reads] of alarms) {
      for (const read of reads) expect(METRIC_REGISTRY[read.name as AnyMetricName]?.alarms, `${id} reads ${read.name}`).toContain(id);
    }
  });

  it('gives each failure metric an alarm, or a reason that docs/DEPLOY.md lists', () => {
    const deploy = readFileSync(new URL('../../docs/DEPLOY.md', import.meta.url), 'utf8');
    for (const [metric, spec] of entries) {
      if (!spec.failure || spec.alarms.length > 0) continue;
      expect(spec.unalarmed, metric).toBeTruthy();
      expect(deploy, metric).toContain(`| \`${metric}\``);
    }
  });
});
