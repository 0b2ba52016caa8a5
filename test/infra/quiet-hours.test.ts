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
  expectQueueSchedule,
  expectQueueSenderRole,
  leadingKeys,
  roleStatements,
  statementBySid,
  synthProdApp,
} from './helpers';

const { template, digestQueueId: queueId } = synthProdApp();

describe('quiet-hours catch-up schedule', () => {
  it('sends a quiet_catch_up message to the digest queue every 5 minutes', () => {
    const props = expectQueueSchedule(template, 'QuietHours', { queueId, kind: QUEUE_MESSAGE_KINDS.quietCatchUp, maxAgeSeconds: 300 });
    expect(props.ScheduleExpression).toBe('rate(5 minutes)');
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
