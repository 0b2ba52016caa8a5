/** What a digest (run.completed, draft.ready) needs from the outside world, and its options. */
import type { DigestMode } from '../contracts';
import type { ChannelPacer, Clock, DigestStore, Log, Metrics, QuietHoursStore, ReadApi, SlackPoster, SubscriptionStore } from '../ports';
import type { ActionValueCodec } from '../buttons/value';
import type { ChartDeps } from './chart-step';
import type { NoiseMinimums } from './noise';
import type { ThreadHandoff } from './thread';

export interface ChannelRouting {
  defaultChannel: string;
  byProject: Readonly<Record<string, string>>;
}

export interface DigestOptions {
  topGaps: number;
  reasoningGaps: number;
  /** page_size the gaps are read with: a list that fills it is truncated, not complete. */
  gapsPageSize: number | undefined;
  /** Dashboard URL template (validated at cold start): links on the project, gaps and drafts. */
  dashboardUrlTemplate: string | undefined;
  /** 'changes': a run with nothing new or moved posts one compact line and no thread. */
  mode: DigestMode;
  /** Per-label minimum changes of metrics that are not shares (the stage's `noiseMinimums`); none = the defaults. */
  noiseMinimums: NoiseMinimums | undefined;
}

export const DIGEST_OPTION_DEFAULTS: DigestOptions = {
  topGaps: 5,
  reasoningGaps: 3,
  gapsPageSize: undefined,
  dashboardUrlTemplate: undefined,
  mode: 'full',
  noiseMinimums: undefined,
};

export interface DigestDeps {
  readApi: ReadApi;
  slack: SlackPoster;
  store: DigestStore;
  channels: ChannelRouting;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  options: DigestOptions;
  /** The invocation's deadline (epoch ms): a pace wait that would pass it hands the record back. */
  deadline: () => number;
  /** Waits for a pace slot. */
  sleep: (ms: number) => Promise<void>;
  /** The longest a digest's first post waits for its channel's slot before the record is handed back (shared/pacing.ts). */
  paceWaitBudgetMs?: number | undefined;
  /** Channels subscribed to projects; none = configuration only. */
  subscriptions?: SubscriptionStore | undefined;
  /** Slack's per-channel pace; none = posts go out unpaced (local tools). */
  pacer?: ChannelPacer | undefined;
  /** Sends a thread's replies not due at once as follow-up records (./thread.ts); none = posted in the same invocation. */
  threads?: ThreadHandoff | undefined;
  /** Signs the values of the digest's buttons (the stage's action-signing key); none or unreadable = no Mute / Only changes buttons. */
  actionValues?: (() => Promise<ActionValueCodec>) | undefined;
  /** Quiet hours: digests held in a channel's window (./held-digests); none = never held. */
  quietHours?: QuietHoursStore | undefined;
  /** Trend charts in the digest's thread (./chart-step); none = charts off. */
  charts?: ChartDeps | undefined;
}
