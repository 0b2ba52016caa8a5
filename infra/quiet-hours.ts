/**
 * Quiet hours' part of the stack: an EventBridge Scheduler schedule that puts a `quiet_catch_up`
 * message on the digest queue every `QUIET_SWEEP_MINUTES` (a catch-up goes out at most that long after a window
 * ends), the role it sends with (sqs:SendMessage on that queue only), and the table grants: the digest
 * function reads windows and holds / claims / finishes held digests (`quiet#`, `held#`), the Slack
 * function sets and reads windows (`quiet#`), and the alarm when a digest cannot be held. Why a sweep and not a one-shot schedule per hold: the
 * channels with held digests are one item to read, a sweep needs no schedule cleanup, and a missed
 * sweep is made up by the next one (docs/SLACK-APP.md, "Quiet hours").
 */
import { Duration, Stack } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Role, ServicePrincipal } from 'aws-cdk-lib/aws-iam';
import { Schedule, ScheduleExpression, ScheduleTargetInput } from 'aws-cdk-lib/aws-scheduler';
import { SqsSendMessage } from 'aws-cdk-lib/aws-scheduler-targets';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { DIGEST_METRICS, QUEUE_MESSAGE_KINDS, QUIET_SWEEP_MINUTES, TABLE } from '../shared/contracts';
import type { AlarmSpec } from './alarms';
import type { BridgeFunction } from './bridge-function';
import type { BridgeConfig } from './config';
import { digestMetric } from './metrics';
import { Store } from './store';

export interface QuietHoursProps {
  readonly config: BridgeConfig;
  /** The digest queue: the sweep is one more kind of message on it (retries and DLQ for free). */
  readonly queue: IQueue;
  readonly table: Table;
  readonly digestFunction: BridgeFunction;
  readonly slackFunction: BridgeFunction;
}

export class QuietHours extends Construct {
  readonly schedule: Schedule;
  readonly role: Role;
  private readonly config: BridgeConfig;

  constructor(scope: Construct, id: string, props: QuietHoursProps) {
    super(scope, id);
    const { config, queue, table, digestFunction, slackFunction } = props;
    this.config = config;
    // Only EventBridge Scheduler of this account may take the role (confused deputy).
    this.role = new Role(this, 'SchedulerRole', {
      assumedBy: new ServicePrincipal('scheduler.amazonaws.com', {
        conditions: { StringEquals: { 'aws:SourceAccount': Stack.of(this).account } },
      }),
      description: 'Sends the quiet-hours catch-up sweep message to the digest queue',
    });
    this.schedule = new Schedule(this, 'CatchUpSweep', {
      description: 'Posts the catch-up of every channel whose quiet hours ended, listing the digests held',
      schedule: ScheduleExpression.rate(Duration.minutes(QUIET_SWEEP_MINUTES)),
      target: new SqsSendMessage(queue, {
        input: ScheduleTargetInput.fromObject({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp }),
        role: this.role,
        // A sweep not delivered within its own interval is replaced by the next one.
        maxEventAge: Duration.minutes(QUIET_SWEEP_MINUTES),
        retryAttempts: 3,
      }),
    });
    digestFunction.allow(
      'QuietHoursHeldDigests',
      ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:UpdateItem'],
      [table.tableArn],
      Store.leadingKeys(TABLE.prefixes.quiet, TABLE.prefixes.held),
    );
    slackFunction.allow(
      'QuietHoursWindows',
      ['dynamodb:BatchGetItem', 'dynamodb:PutItem', 'dynamodb:DeleteItem'],
      [table.tableArn],
      Store.leadingKeys(TABLE.prefixes.quiet),
    );
  }

  alarmSpecs(): AlarmSpec[] {
    return [
      {
        id: 'DigestHoldFailed',
        description:
          "A digest could not be held in a channel's quiet hours (the table refused or failed the write): that channel did not get the run, the other channels did. The digest function log ('digest not held') names the channel, the event and the cause.",
        metric: digestMetric(DIGEST_METRICS.digestHoldFailed, this.config.stage),
        threshold: 1,
      },
    ];
  }
}
