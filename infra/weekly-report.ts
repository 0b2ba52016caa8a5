/**
 * The weekly report's part of the stack: an EventBridge Scheduler schedule that puts a
 * `weekly_sweep` message on the digest queue every 15 minutes (in the stage's time zone), the role
 * it sends with (sqs:SendMessage on that queue only), the table grants of the digest function
 * (claims and baselines; schedules read-only) and the Slack function (schedules), and the alarm
 * when a report fails. Why a sweep and not a schedule per channel: channels choose their own day,
 * time and zone, which a sweep reads from one item (docs/SLACK-APP.md, "Weekly report").
 */
import { Duration, Stack, TimeZone } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { SqsSendMessage } from 'aws-cdk-lib/aws-scheduler-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DIGEST_METRICS, ENV, TABLE } from '../shared/contracts';
import { weeklySweepMessage } from '../shared/weekly/message';
import { SWEEP_MINUTES } from '../shared/weekly/schedule';
import type { AlarmSpec } from './alarms';
import type { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { digestMetric } from './metrics';
import { Store } from './store';

export interface WeeklyReportProps {
  readonly config: BridgeConfig;
  /** The digest queue: the sweep is one more kind of message on it (retries and DLQ for free). */
  readonly queue: IQueue;
  readonly table: Table;
  readonly digestFunction: BridgeFunction;
  readonly slackFunction: BridgeFunction;
}

export class WeeklyReport extends Construct {
  readonly schedule: Schedule;
  readonly role: Role;
  private readonly config: BridgeConfig;

  constructor(scope: Construct, id: string, props: WeeklyReportProps) {
    super(scope, id);
    const { config, queue, table, digestFunction, slackFunction } = props;
    this.config = config;
    // Only EventBridge Scheduler of this account may take the role (confused deputy).
    this.role = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'Sends the weekly-report sweep message to the digest queue',
    });
    this.schedule = new Schedule(this, 'Sweep', {
      description: `Posts the weekly reports that are due (each channel has its own day and time; default Monday 09:00 ${config.timeZone})`,
      schedule: ScheduleExpression.cron({ minute: `0/${SWEEP_MINUTES}`, timeZone: TimeZone.of(config.timeZone) }),
      target: new SqsSendMessage(queue, {
        input: ScheduleTargetInput.fromObject(weeklySweepMessage()),
        role: this.role,
        // A sweep not delivered within its own interval is replaced by the next one.
        maxEventAge: Duration.minutes(SWEEP_MINUTES),
        retryAttempts: 3,
      }),
    });
    digestFunction.allow(
      'WeeklyClaimsAndBaselines',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:PutItem'],
      [table.tableArn],
      Store.leadingKeys(TABLE.prefixes.weekly),
    );
    digestFunction.allow('WeeklySchedulesRead', ['dynamodb:GetItem'], [table.tableArn], Store.leadingKeys(TABLE.prefixes.weeklySettings));
    slackFunction.allow(
      'WeeklySchedules',
      ['dynamodb:GetItem', 'dynamodb:UpdateItem'],
      [table.tableArn],
      Store.leadingKeys(TABLE.prefixes.weeklySettings),
    );
    for (const fn of [digestFunction, slackFunction]) fn.fn.addEnvironment(ENV.timeZone, config.timeZone);
  }

  alarmSpecs(): AlarmSpec[] {
    return [
      {
        id: 'WeeklyReportFailed',
        description:
          "A channel's weekly report could not be posted: the next sweep (every 15 minutes, for up to a day after its time) tries again, and a report is never posted twice. The digest function log ('weekly report failed') names the channel and the cause (Slack refused the channel, the table failed).",
        metric: digestMetric(DIGEST_METRICS.weeklyReportFailed, this.config.stage),
        threshold: 1,
      },
    ];
  }
}
