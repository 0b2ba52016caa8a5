/** The delay a paced record is sent again with (shared/worker/sqs.ts): the pace's wait, then doubled per requeue. */
import { describe, expect, it } from 'vitest';
import type { SQSRecord } from 'aws-lambda';
import { paceRequeueDelaySeconds, requeueGroupOf } from '../../shared/worker/sqs';

describe('paceRequeueDelaySeconds', () => {
  it("is the pace's wait, whole seconds and at least one, the first time", () => {
    expect(paceRequeueDelaySeconds(3.3, 0)).toBe(4);
    expect(paceRequeueDelaySeconds(0, 0)).toBe(1);
  });

  it('doubles with each earlier requeue, so a long backlog redoes its reads a few times, not once per slot', () => {
    expect([0, 1, 2, 3].map((n) => paceRequeueDelaySeconds(5, n))).toEqual([5, 10, 20, 40]);
  });

  it("stays within SQS's 900 s DelaySeconds", () => {
    expect(paceRequeueDelaySeconds(5, 8)).toBe(900);
    expect(paceRequeueDelaySeconds(5, 1_000)).toBe(900);
    expect(paceRequeueDelaySeconds(2_000, 0)).toBe(900);
  });
});

describe('requeueGroupOf', () => {
  const tenant = { tenant: { stringValue: 'client-a', dataType: 'String' } };
  const attributes = (group?: string) => ({ ...(group === undefined ? {} : { MessageGroupId: group }) }) as SQSRecord['attributes'];

  it("keeps the record's MessageGroupId", () => {
    expect(requeueGroupOf({ attributes: attributes('client-a'), messageAttributes: {} })).toBe('client-a');
  });

  it('falls back to the tenant ingest named, so a copy never loses its tenant when the event lacks the group', () => {
    expect(requeueGroupOf({ attributes: attributes(), messageAttributes: tenant })).toBe('client-a');
    expect(requeueGroupOf({ attributes: attributes(), messageAttributes: {} })).toBeUndefined();
  });
});
