/**
 * Per-channel delivery, model-based, on the real adapters: the sequences of
 * test/unit/channel-delivery-model.test.ts (commands, clicks, runs, sweeps, clock jumps in a home channel
 * and two others, checked after every step against test/support/delivery-model.ts) with the DynamoDB
 * stores on dynalite (a table per sequence) and the Slack poster on the local Slack server, whose stored
 * messages are what is counted. Fewer, shorter sequences (25, at most 15 steps): every operation is a round trip.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ensureBridgeTable, startLocalDynamo, type LocalDynamo } from '../../local/dynamo';
import { LocalSlackServer } from '../../local/slack/server';
import { DynamoDigestStore } from '../../shared/adapters/dynamo-digest-store';
import { DynamoQuietHoursStore } from '../../shared/adapters/dynamo-quiet-hours';
import { DynamoSubscriptionStore } from '../../shared/adapters/dynamo-subscription-store';
import { createSlackPoster } from '../../shared/adapters/slack-poster';
import {
  deliveryCommands,
  initialModel,
  regressionExamples,
  replayParameters,
  type DeliveryModel,
  type DeliveryReal,
} from '../support/delivery-model';
import { DeliveryWorld } from '../support/delivery-world';

const TOKEN = 'xoxb-model';
const START = Date.parse('2026-11-24T20:00:00Z');

let dynamo: LocalDynamo;
let slack: LocalSlackServer;
let sequence = 0;

beforeAll(async () => {
  dynamo = await startLocalDynamo();
  slack = await LocalSlackServer.start({ tokens: [TOKEN] });
});

afterAll(async () => {
  await Promise.all([dynamo.close(), slack.close()]);
});

/** A fresh table and fresh channels for each sequence: nothing held or claimed by an earlier one is seen. */
async function setup(): Promise<{ model: DeliveryModel; real: DeliveryReal }> {
  const n = ++sequence;
  const table = `model-${n}`;
  await ensureBridgeTable(dynamo.client, table);
  slack.reset();
  const channels = { home: `C0HOME${n}`, b: `C0BRAVO${n}`, c: `C0CHARLIE${n}` };
  const world = new DeliveryWorld(
    {
      subscriptions: new DynamoSubscriptionStore(dynamo.client, table),
      quietHours: new DynamoQuietHoursStore(dynamo.client, table),
      store: new DynamoDigestStore(dynamo.client, { tableName: table, leaseMs: 600_000, retentionSeconds: 86_400 }),
      slack: createSlackPoster({ token: TOKEN, slackApiUrl: slack.apiUrl, sleep: () => Promise.resolve(), maxAttempts: 1 }),
      topLevel: (channel) =>
        slack
          .messages(channel)
          .filter((m) => m.thread_ts === undefined)
          .map((m) => ({ blocks: m.blocks ?? [], metadata: m.metadata })),
    },
    `p-north-${n}`,
    channels.home,
    START,
  );
  return { model: initialModel(START), real: { world, channels } };
}

describe('per-channel delivery (model-based, dynalite and the local Slack server)', () => {
  it('every run reaches every channel that should get it exactly once, after its quiet window, and no other', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryCommands(fc, 15), (commands) => fc.asyncModelRun(setup, commands)),
      { numRuns: 25, examples: regressionExamples(), ...replayParameters() },
    );
  }, 300_000);
});
