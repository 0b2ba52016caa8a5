/**
 * The digest's per-run metrics by tenant: the Powertools adapter's real EMF output (stdout captured)
 * carries each breakdown (tenant, reason…) as a record of its own beside the total the alarms read.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createObservability } from '../../shared/adapters/powertools';
import { DIGEST_METRICS, METRIC_DIMENSIONS, SERVICES } from '../../shared/contracts';
import { emfMetrics } from '../../local/rehearse/alarm-coverage';

function emitted(counts: (metrics: ReturnType<typeof createObservability>['metrics']) => void): ReturnType<typeof emfMetrics> {
  const lines: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(...String(chunk).split('\n').filter(Boolean));
    return true;
  });
  const observability = createObservability(SERVICES.digest, 'prod');
  counts(observability.metrics);
  observability.flush();
  vi.restoreAllMocks();
  return emfMetrics(lines);
}

afterEach(() => vi.restoreAllMocks());

describe('per-tenant metric dimension', () => {
  const base = { service: 'digest', stage: 'prod' };
  const metric = (name: string, dimensions: Record<string, string> = {}) => ({
    namespace: 'VisibilitySlackBridge',
    name,
    dimensions: { ...base, ...dimensions },
  });

  it('emits the total, and each breakdown dimension as its own record (never one record of both)', () => {
    const records = emitted((metrics) => {
      metrics.count(DIGEST_METRICS.digestPosted, 1, { [METRIC_DIMENSIONS.tenant]: 'acme-seo' });
      metrics.count(DIGEST_METRICS.chartFailed, 1, { [METRIC_DIMENSIONS.reason]: 'upload_refused', [METRIC_DIMENSIONS.tenant]: 'stack' });
    });
    expect(records).toEqual(
      expect.arrayContaining([
        metric('DigestPosted'),
        metric('DigestPosted', { tenant: 'acme-seo' }),
        metric('ChartFailed'),
        metric('ChartFailed', { reason: 'upload_refused' }),
        metric('ChartFailed', { tenant: 'stack' }),
      ]),
    );
    expect(records.filter((r) => 'reason' in r.dimensions && 'tenant' in r.dimensions)).toEqual([]);
  });
});
