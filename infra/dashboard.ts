/** The stage's dashboard: alarms, webhook API, custom metrics, functions and queues. */
import { Duration, Stack } from 'aws-cdk-lib';
import { AlarmStatusWidget, Dashboard, GraphWidget, TextWidget, type Alarm, type IMetric, type Metric } from 'aws-cdk-lib/aws-cloudwatch';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { DIGEST_METRICS, INGEST_METRICS } from '../shared/contracts';
import type { AlarmSources } from './alarms';
import { digestMetric, FIVE_MINUTES, ingestMetric, nonSignatureRejections, throttledMetric } from './metrics';

const sum = (metric: Metric, label: string): Metric => metric.with({ statistic: 'Sum', period: FIVE_MINUTES, label });
const p99 = (metric: Metric, label: string): Metric => metric.with({ statistic: 'p99', period: FIVE_MINUTES, label });
const max = (metric: Metric, label: string): Metric => metric.with({ statistic: 'Maximum', period: FIVE_MINUTES, label });
const graph = (title: string, left: IMetric[], right: IMetric[] = []): GraphWidget => new GraphWidget({ title, left, right, width: 12 });

/** Named `<stack>-<region>`: dashboards are global per account, stacks are regional. */
export function createDashboard(scope: Construct, sources: AlarmSources, alarms: Alarm[]): Dashboard {
  const stack = Stack.of(scope);
  const dashboard = new Dashboard(scope, 'Dashboard', {
    dashboardName: `${stack.stackName}-${stack.region}`,
    defaultInterval: Duration.days(1),
  });
  const intro = `# Visibility Slack bridge (${sources.config.stage})\nWebhook → ingest → SQS → digest → Slack. Alarms go to the alarm topic.`;
  dashboard.addWidgets(new TextWidget({ markdown: intro, width: 24, height: 2 }));
  dashboard.addWidgets(new AlarmStatusWidget({ title: 'Alarms', alarms, width: 24, height: 4 }));
  dashboard.addWidgets(...apiWidgets(sources));
  dashboard.addWidgets(...customMetricWidgets(sources.config.stage));
  dashboard.addWidgets(...functionWidgets('Ingest', sources.ingestFunction));
  dashboard.addWidgets(...functionWidgets('Digest', sources.digestFunction));
  dashboard.addWidgets(...queueWidgets(sources));
  return dashboard;
}

function apiWidgets({ api, config }: AlarmSources): GraphWidget[] {
  return [
    graph('Webhook API: requests and errors', [
      sum(api.metricCount(), 'Requests'),
      sum(api.metricClientError(), '4xx'),
      sum(api.metricServerError(), '5xx'),
      throttledMetric(config.stage),
    ]),
    graph('Webhook API: latency p99 (ms)', [
      p99(api.metricLatency(), 'Latency'),
      p99(api.metricIntegrationLatency(), 'Integration latency'),
    ]),
  ];
}

function customMetricWidgets(stage: string): GraphWidget[] {
  return [
    graph('Ingest deliveries', [...Object.values(INGEST_METRICS).map((name) => ingestMetric(name, stage)), nonSignatureRejections(stage)]),
    graph(
      'Digest outcomes',
      Object.values(DIGEST_METRICS).map((name) => digestMetric(name, stage)),
    ),
  ];
}

function functionWidgets(name: string, fn: IFunction): GraphWidget[] {
  return [
    graph(`${name} function: invocations, errors, throttles`, [
      sum(fn.metricInvocations(), 'Invocations'),
      sum(fn.metricErrors(), 'Errors'),
      sum(fn.metricThrottles(), 'Throttles'),
    ]),
    graph(`${name} function: duration p99 (ms)`, [p99(fn.metricDuration(), 'Duration p99')]),
  ];
}

function queueWidgets({ queue, dlq }: AlarmSources): GraphWidget[] {
  return [
    graph(
      'Digest queue',
      [
        max(queue.metricApproximateNumberOfMessagesVisible(), 'Visible'),
        max(queue.metricApproximateNumberOfMessagesNotVisible(), 'In flight'),
      ],
      [max(queue.metricApproximateAgeOfOldestMessage(), 'Age of oldest (s)')],
    ),
    graph('Dead-letter queue', [max(dlq.metricApproximateNumberOfMessagesVisible(), 'Visible')]),
  ];
}
