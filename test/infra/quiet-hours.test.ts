/**
 * Quiet hours' CDK part: the catch-up sweep schedule (every 5 minutes, a quiet_catch_up message to the
 * digest queue), its role (sqs:SendMessage on that queue only, assumable by Scheduler of this account),
 * and the table grants: the digest function on quiet# and held# (no Put, Delete, Scan or Query), the
 * Slack function on quiet# only.
 */
import { describe, expect, it } from 'vitest';
import { QUEUE_MESSAGE_KINDS, TABLE } from '../../shared/contracts';
import {
  actionsOf,
  arnOf,
  expectQueueSenderRole,
  leadingKeys,
  logicalId,
  roleStatements,
  scheduleProps,
  statementBySid,
  synthApp,
} from './helpers';

const { template } = synthApp({ development: false, alarmEmail: 'ops@example.com' }, { stage: 'prod' });
const queueId = logicalId(template, 'AWS::SQS::Queue', 'DigestQueue');

describe('quiet-hours catch-up schedule', () => {
  it('sends a quiet_catch_up message to the digest queue every 5 minutes', () => {
    const props = scheduleProps(template, 'QuietHours');
    expect(props.ScheduleExpression).toBe('rate(5 minutes)');
    expect(props.Target.Arn).toEqual(arnOf(queueId));
    expect(JSON.parse(props.Target.Input)).toEqual({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp });
    expect(props.Target.RetryPolicy.MaximumEventAgeInSeconds).toBe(300);
    expect(props.Target.RoleArn).toEqual(arnOf(logicalId(template, 'AWS::IAM::Role', 'QuietHoursSchedulerRole')));
  });

  it("gives the scheduler's role only sqs:SendMessage on the digest queue, assumable by Scheduler of this account", () => {
    expectQueueSenderRole(template, 'QuietHoursSchedulerRole', 'quiet-hours catch-up', queueId);
  });

  it('grants the digest function quiet# and held# items, and the Slack function quiet# only', () => {
    const digest = statementBySid(roleStatements(template, 'DigestWorkerDigest'), 'QuietHoursHeldDigests');
    expect(actionsOf(digest)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:GetItem', 'dynamodb:UpdateItem']);
    // A channel's window is the channel's; the held digests are a tenant's.
    expect(digest.Condition).toEqual(leadingKeys([TABLE.prefixes.quiet, TABLE.prefixes.held], [TABLE.prefixes.held]));
    const slack = statementBySid(roleStatements(template, 'SlackAppSlack'), 'QuietHoursWindows');
    expect(actionsOf(slack)).toEqual(['dynamodb:BatchGetItem', 'dynamodb:DeleteItem', 'dynamodb:PutItem']);
    expect(slack.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.quiet}*`] } });
  });
});
