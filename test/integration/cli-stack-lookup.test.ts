// The CLI's CloudFormation look-up (describeStackWithSdk) through the real
// @aws-sdk/client-cloudformation client, against the local CloudFormation server (query protocol, XML).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CreateQueueCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { describeStackWithSdk, type AwsSettings } from '../../cli/aws';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import { STACK_OUTPUTS } from '../../shared/contracts';
import { LocalCloudFormationServer } from '../../local/cloudformation-server';
import { SqsServer, createSqsClient } from '../../local/sqs-server';

const STACK = 'VisibilitySlackBridge-lookup';
let cloudFormation: LocalCloudFormationServer;
let sqsServer: SqsServer;
let sqs: SQSClient;

beforeAll(async () => {
  cloudFormation = await LocalCloudFormationServer.start();
  sqsServer = await SqsServer.start();
  sqs = createSqsClient(sqsServer.url);
});

afterAll(async () => {
  sqs.destroy();
  await Promise.all([cloudFormation.close(), sqsServer.close()]);
});

function settings(): AwsSettings {
  return { region: 'eu-west-1', endpoints: { cloudformation: cloudFormation.url }, env: {} };
}

describe('describeStackWithSdk', () => {
  it('returns the stack name, status and every output, from a signed DescribeStacks request', async () => {
    const name = `${STACK}-outputs`;
    cloudFormation.putStack({
      name,
      status: 'UPDATE_COMPLETE',
      outputs: { [STACK_OUTPUTS.queueUrl]: 'http://q/1', [STACK_OUTPUTS.tableName]: 'table & <co>' },
    });
    const info = await describeStackWithSdk(name, settings());
    expect(info).toEqual({
      name,
      status: 'UPDATE_COMPLETE',
      outputs: { [STACK_OUTPUTS.queueUrl]: 'http://q/1', [STACK_OUTPUTS.tableName]: 'table & <co>' },
    });
    expect(cloudFormation.calls().filter((c) => c.stackName === name)).toEqual([
      { action: 'DescribeStacks', stackName: name, signed: true },
    ]);
  });

  it('throws the ValidationError CloudFormation answers for a stack that does not exist', async () => {
    const name = `${STACK}-missing`;
    await expect(describeStackWithSdk(name, settings())).rejects.toMatchObject({
      name: 'ValidationError',
      message: `Stack with id ${name} does not exist`,
    });
  });
});

describe('bridge commands that read the stack outputs', () => {
  it('finds the queues of `dlq stats` through the stack outputs', async () => {
    const name = `${STACK}-dlq`;
    const queue = await sqs.send(new CreateQueueCommand({ QueueName: 'lookup-queue' }));
    const dlq = await sqs.send(new CreateQueueCommand({ QueueName: 'lookup-dlq' }));
    cloudFormation.putStack({ name, outputs: { [STACK_OUTPUTS.queueUrl]: queue.QueueUrl!, [STACK_OUTPUTS.dlqUrl]: dlq.QueueUrl! } });
    const out = bufferIo({ pollIntervalMs: 20 });
    const args = [
      'dlq',
      'stats',
      '--stack',
      name,
      '--endpoint-cloudformation',
      cloudFormation.url,
      '--endpoint-sqs',
      sqsServer.url,
      '--json',
    ];
    expect(await run(args, out)).toBe(0);
    const doc = JSON.parse(out.stdout.text()) as { dlq: { url: string }; queue: { url: string } };
    expect([doc.queue.url, doc.dlq.url]).toEqual([queue.QueueUrl, dlq.QueueUrl]);
  });

  it('names the stack and the endpoint when the stack does not exist', async () => {
    const name = `${STACK}-absent`;
    const out = bufferIo({ pollIntervalMs: 20 });
    expect(
      await run(['dlq', 'stats', '--stack', name, '--endpoint-cloudformation', cloudFormation.url, '--endpoint-sqs', sqsServer.url], out),
    ).not.toBe(0);
    expect(out.stderr.text()).toContain(name);
    expect(out.stderr.text()).toMatch(/does not exist/);
  });

  it('names the missing output when the stack lacks one the command needs', async () => {
    const name = `${STACK}-no-dlq`;
    cloudFormation.putStack({ name, outputs: { [STACK_OUTPUTS.queueUrl]: 'http://127.0.0.1:1/000000000000/q' } });
    const out = bufferIo({ pollIntervalMs: 20 });
    expect(
      await run(['dlq', 'stats', '--stack', name, '--endpoint-cloudformation', cloudFormation.url, '--endpoint-sqs', sqsServer.url], out),
    ).not.toBe(0);
    expect(out.stderr.text()).toContain(STACK_OUTPUTS.dlqUrl);
  });
});
