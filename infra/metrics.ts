/** The bridge's custom metrics as CloudWatch reads them: namespace and dimensions {service, stage}. */
import { Duration } from 'aws-cdk-lib';
import { MathExpression, Metric } from 'aws-cdk-lib/aws-cloudwatch';
import {
  DIGEST_METRICS,
  INGEST_METRICS,
  METRIC_DIMENSIONS,
  METRICS_NAMESPACE,
  SERVICES,
  WEBHOOK_API_METRICS,
  WEBHOOK_API_SERVICE,
  type DigestMetricName,
  type IngestMetricName,
} from '../shared/contracts';

export const FIVE_MINUTES = Duration.minutes(5);

function sum(service: string, metricName: string, stage: string, period: Duration): Metric {
  return new Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { [METRIC_DIMENSIONS.service]: service, [METRIC_DIMENSIONS.stage]: stage },
    statistic: 'Sum',
    period,
  });
}

export function ingestMetric(name: IngestMetricName, stage: string, period: Duration = FIVE_MINUTES): Metric {
  return sum(SERVICES.ingest, name, stage, period);
}

export function digestMetric(name: DigestMetricName, stage: string, period: Duration = FIVE_MINUTES): Metric {
  return sum(SERVICES.digest, name, stage, period);
}

/** 429s of the webhook API (counted from its access log). */
export function throttledMetric(stage: string, period: Duration = FIVE_MINUTES): Metric {
  return sum(WEBHOOK_API_SERVICE, WEBHOOK_API_METRICS.throttled, stage, period);
}

/** Rejections other than a bad signature: schema, size, stored id... (DeliveryRejected − SignatureRejected). */
export function nonSignatureRejections(stage: string): MathExpression {
  return new MathExpression({
    expression: 'FILL(rejected, 0) - FILL(signature, 0)',
    usingMetrics: {
      rejected: ingestMetric(INGEST_METRICS.deliveryRejected, stage),
      signature: ingestMetric(INGEST_METRICS.signatureRejected, stage),
    },
    period: FIVE_MINUTES,
    label: 'Rejected, not for the signature',
  });
}

/**
 * Runs accepted in the previous window of `hours` that no digest handled (posted, superseded,
 * duplicate, or muted in every channel) in that window or the current one: at each window k, accepted(k−1) − handled(k−1) − handled(k).
 * The previous window's value is `x − DIFF(x)` (DIFF: each value minus the one before it), so every
 * datapoint depends only on its own two windows. RUNNING_SUM is not used: CloudWatch recommends against
 * it in alarms, because an alarm fetches more datapoints than its evaluation periods and a running sum
 * then depends on where the fetched range starts. FILL comes first so DIFF compares adjacent windows.
 */
export function undeliveredDigests(stage: string, hours: number): MathExpression {
  const period = Duration.hours(hours);
  const handled = new MathExpression({
    expression: 'FILL(posted, 0) + FILL(superseded, 0) + FILL(duplicate, 0) + FILL(muted, 0)',
    usingMetrics: {
      posted: digestMetric(DIGEST_METRICS.digestPosted, stage, period),
      superseded: digestMetric(DIGEST_METRICS.eventSuperseded, stage, period),
      duplicate: digestMetric(DIGEST_METRICS.eventDuplicate, stage, period),
      muted: digestMetric(DIGEST_METRICS.runMuted, stage, period),
    },
    period,
    label: 'Runs handled by a digest',
  });
  return new MathExpression({
    // accepted(k−1) − (handled(k−1) + handled(k)), with x(k−1) written as x − DIFF(x).
    expression: 'FILL(accepted, 0) - DIFF(FILL(accepted, 0)) - (2 * handled - DIFF(handled))',
    usingMetrics: { accepted: ingestMetric(INGEST_METRICS.runCompletedAccepted, stage, period), handled },
    period,
    label: `Runs accepted without a digest after ${hours} h`,
  });
}
