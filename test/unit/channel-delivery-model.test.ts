/**
 * Per-channel delivery, model-based: 1,000 random sequences of subscribe / unsubscribe / mute / unmute /
 * mode / filter / quiet commands, button clicks, runs, quiet-hours sweeps and clock jumps across a home
 * channel and two others, through the real digest handler, command service and button handler over
 * in-memory doubles of the stores (test/support/memory-stores.ts) and a recording Slack poster, each step
 * checked against the reference model (test/support/delivery-model.ts). A failure prints the seed, the
 * path and the shrunk sequence (`FC_SEED=<seed> FC_PATH=<path>` replays it). The same sequences run
 * against dynalite and the local Slack server in test/integration/channel-delivery-model.test.ts.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import {
  deliveryCommands,
  initialModel,
  regressionExamples,
  replayParameters,
  type DeliveryModel,
  type DeliveryReal,
} from '../support/delivery-model';
import { DeliveryWorld } from '../support/delivery-world';
import { MemoryDigestStore, MemoryQuietHoursStore, MemorySubscriptionStore } from '../support/memory-stores';
import { RecordingSlack } from '../support/recording-slack';

const START = Date.parse('2026-11-24T20:00:00Z');
const CHANNELS = { home: 'C0HOME', b: 'C0BRAVO', c: 'C0CHARLIE' } as const;

function setup(): { model: DeliveryModel; real: DeliveryReal } {
  // The messages' ts follow the world's clock.
  const slack = new RecordingSlack(() => world.now);
  const world: DeliveryWorld = new DeliveryWorld(
    {
      subscriptions: new MemorySubscriptionStore(),
      quietHours: new MemoryQuietHoursStore(),
      store: new MemoryDigestStore(),
      slack,
      topLevel: (channel) => slack.topLevel(channel),
    },
    'p-north',
    CHANNELS.home,
    START,
  );
  return { model: initialModel(START), real: { world, channels: CHANNELS } };
}

describe('per-channel delivery (model-based, in-memory stores)', () => {
  it('every run reaches every channel that should get it exactly once, after its quiet window, and no other', async () => {
    await fc.assert(
      fc.asyncProperty(deliveryCommands(fc, 25), (commands) => fc.asyncModelRun(setup, commands)),
      { numRuns: 1000, examples: regressionExamples(), ...replayParameters() },
    );
  }, 300_000);
});
