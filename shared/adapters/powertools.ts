/**
 * Powertools-backed Log and Metrics for Lambda: JSON logs with the service name and cold-start
 * flag, and CloudWatch EMF metrics (no PutMetricData calls on the hot path).
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics as PowertoolsMetrics, MetricUnit } from '@aws-lambda-powertools/metrics';
import { DEFAULT_STAGE, METRIC_DIMENSIONS, METRICS_NAMESPACE } from '../contracts';
import type { Log, LogFields, Metrics } from '../ports';

export interface Observability {
  log: Log;
  metrics: Metrics;
  /** Writes the metrics buffered during one invocation; call once at its end. */
  flush(): void;
  /** Adds a field to every log line of the current invocation (e.g. the delivery id). */
  appendKeys(fields: LogFields): void;
  resetKeys(): void;
}

/**
 * Metrics carry the `service` dimension (Powertools adds it from the service name) and `stage`, so
 * each deployment's alarms read only its own metrics.
 */
export function createObservability(serviceName: string, stage: string = DEFAULT_STAGE): Observability {
  const logger = new Logger({ serviceName });
  const metrics = new PowertoolsMetrics({
    namespace: METRICS_NAMESPACE,
    serviceName,
    defaultDimensions: { [METRIC_DIMENSIONS.stage]: stage },
  });
  const appended = new Set<string>();
  return {
    log: {
      debug: (message, fields = {}) => logger.debug(message, fields),
      info: (message, fields = {}) => logger.info(message, fields),
      warn: (message, fields = {}) => logger.warn(message, fields),
      error: (message, fields = {}) => logger.error(message, fields),
    },
    metrics: {
      count(name, value = 1, dimensions = {}) {
        // Each breakdown (by reason, by tenant…) goes out as its own EMF record, so it splits neither
        // the total the alarms read nor another breakdown, and its cardinality stays that of one dimension.
        for (const [key, dim] of Object.entries(dimensions)) {
          const single = metrics.singleMetric();
          single.addDimension(key, dim);
          single.addMetric(name, MetricUnit.Count, value);
        }
        metrics.addMetric(name, MetricUnit.Count, value);
      },
    },
    flush() {
      if (metrics.hasStoredMetrics()) metrics.publishStoredMetrics();
    },
    appendKeys(fields) {
      for (const key of Object.keys(fields)) appended.add(key);
      logger.appendKeys(fields);
    },
    resetKeys() {
      if (appended.size > 0) logger.removeKeys([...appended]);
      appended.clear();
    },
  };
}
