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
 * Runs accepted in the previous window of `hours` that no digest handled (posted, superseded or
 * duplicate) by the end of the current one. Evaluated over two windows: the running sums start at
 * the first, and subtracting the current window's acceptances leaves only runs that had at least
 * `hours` to be handled, so a run accepted a minute ago never counts.
 */
export function undeliveredDigests(stage: string, hours: number): MathExpression {
  const period = Duration.hours(hours);
  return new MathExpression({
    expression:
      'RUNNING_SUM(FILL(accepted, 0)) - FILL(accepted, 0) - RUNNING_SUM(FILL(posted, 0) + FILL(superseded, 0) + FILL(duplicate, 0))',
    usingMetrics: {
      accepted: ingestMetric(INGEST_METRICS.runCompletedAccepted, stage, period),
      posted: digestMetric(DIGEST_METRICS.digestPosted, stage, period),
      superseded: digestMetric(DIGEST_METRICS.eventSuperseded, stage, period),
      duplicate: digestMetric(DIGEST_METRICS.eventDuplicate, stage, period),
    },
    period,
    label: `Runs accepted without a digest after ${hours} h`,
  });
}
