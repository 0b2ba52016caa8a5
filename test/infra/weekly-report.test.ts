/**
 * The weekly report's CDK part: the EventBridge Scheduler schedule (every 15 minutes in the stage's
 * zone, a weekly_sweep message to the digest queue), its role (sqs:SendMessage on that queue only,
 * assumable by Scheduler of this account), the functions' table grants and the alarm.
 */
import { describe, expect, it } from 'vitest';
import { Match } from 'aws-cdk-lib/assertions';
import { QUEUE_MESSAGE_KINDS, TABLE } from '../../shared/contracts';
import {
  actionsOf,
  expectQueueSchedule,
  expectQueueSenderRole,
  leadingKeys,
  roleStatements,
  statementBySid,
  synthApp,
  synthProdApp,
} from './helpers';

const { template, digestQueueId: queueId } = synthProdApp({ timeZone: 'Europe/Berlin' });

describe('weekly report schedule', () => {
  it('sweeps every 15 minutes in the stage zone, sending a weekly_sweep message to the digest queue', () => {
    // The quiet-hours sweep has its own schedule (test/infra/quiet-hours.test.ts).
    const props = expectQueueSchedule(template, 'WeeklyReport', { queueId, kind: QUEUE_MESSAGE_KINDS.weeklySweep, maxAgeSeconds: 900 });
    expect(props.ScheduleExpression).toBe('cron(0/15 * * * ? *)');
    expect(props.ScheduleExpressionTimezone).toBe('Europe/Berlin');
  });

  it('defaults to UTC when the stage names no zone, and refuses a zone that is not one', () => {
    synthApp().template.hasResourceProperties('AWS::Scheduler::Schedule', { ScheduleExpressionTimezone: 'UTC' });
    expect(() => synthApp({ timeZone: 'Mars/Olympus' })).toThrow(/timeZone/);
  });

  it("gives the scheduler's role only sqs:SendMessage on the digest queue, assumable by Scheduler of this account", () => {
    expectQueueSenderRole(template, 'WeeklyReportSchedulerRole', 'weekly-report sweep', queueId);
  });

  it('grants the digest function its weekly keys, read-only on the schedules, and the Slack function the schedules only', () => {
    const digest = roleStatements(template, 'DigestWorkerDigest');
    const claims = statementBySid(digest, 'WeeklyClaimsAndBaselines');
    expect(actionsOf(claims)).toEqual(['dynamodb:GetItem', 'dynamodb:PutItem', 'dynamodb:UpdateItem']);
    expect(claims.Condition).toEqual(leadingKeys([TABLE.prefixes.weekly], [TABLE.prefixes.weekly]));
    const read = statementBySid(digest, 'WeeklySchedulesRead');
    expect(actionsOf(read)).toEqual(['dynamodb:GetItem']);
    expect(read.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.weeklySettings}*`] } });
    const slack = statementBySid(roleStatements(template, 'SlackAppSlack'), 'WeeklySchedules');
    expect(actionsOf(slack)).toEqual(['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    expect(slack.Condition).toEqual({ 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${TABLE.prefixes.weeklySettings}*`] } });
  });

  it('alarms on the first failed weekly report', () => {
    template.hasResourceProperties('AWS::CloudWatch::Alarm', {
      AlarmName: Match.stringLikeRegexp('-WeeklyReportFailed$'),
      MetricName: 'WeeklyReportFailed',
      Namespace: 'VisibilitySlackBridge',
      Threshold: 1,
      ComparisonOperator: 'GreaterThanOrEqualToThreshold',
      Dimensions: Match.arrayWith([{ Name: 'service', Value: 'digest' }]),
    });
  });
});
