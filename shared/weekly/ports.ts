/**
 * Ports of the weekly report (one message per channel and week, a section per project): the
 * channels' schedules, the claim that posts a channel's week exactly once, and the baseline each
 * report leaves for the next one's "opened / closed" lists. A leaf: it imports only ../ports and
 * ../contracts; the domain modules beside it import these types, never the other way round.
 */
import type { Tenant } from '../tenancy';
import type { QUEUE_MESSAGE_KINDS } from '../contracts';
import type { ChannelPacer, Clock, DigestStore, Log, Metrics, SlackPoster, SubscriptionStore } from '../ports';

/** ISO weekday: 1 = Monday … 7 = Sunday. */
export type IsoWeekday = 1 | 2 | 3 | 4 | 5 | 6 | 7;

/** When a channel's report goes out, in the channel's (or the stage's) time zone. */
export interface WeeklySchedule {
  day: IsoWeekday;
  /** Minutes after local midnight (09:00 → 540). */
  minuteOfDay: number;
  /** IANA zone, e.g. "Europe/Berlin". */
  timeZone: string;
}

/** A channel's own setting (`/visibility weekly …`); channels without one follow the stage's default. */
export interface WeeklySetting {
  enabled: boolean;
  /** Absent: the stage's default day / time / zone (Monday 09:00 in the stage's zone). */
  day?: IsoWeekday | undefined;
  minuteOfDay?: number | undefined;
  timeZone?: string | undefined;
  changedBy: string;
  changedAtMs: number;
}

/** What a claim of one channel's week says. */
export type WeeklyClaim =
  | {
      status: 'claimed';
      token: string;
      /** 1 on the first claim; more when an earlier attempt failed or died. */
      attempt: number;
      /** When the week was first claimed (epoch ms): an earlier attempt's post is not older. */
      firstClaimedMs: number;
      /** The report's ts when an earlier attempt posted it but did not finish. */
      postedTs?: string | undefined;
    }
  | { status: 'done'; ts?: string | undefined }
  | { status: 'busy' };

/** One gap as the last report saw it (for "closed since last week"). */
export interface BaselineGap {
  prompt_id: string;
  prompt_ref: string | number | boolean | null;
  /** Cut to `BASELINE_TEXT` characters. */
  prompt_text: string;
}

/** What the last report of a channel saw of one project: the next report's "since last week". */
export interface WeeklyBaseline {
  projectId: string;
  atMs: number;
  /** The snapshot's run the report was made from (absent when the project had none). */
  runId?: string | undefined;
  gaps: BaselineGap[];
  gapsTruncated: boolean;
  engines: Record<string, number>;
}

/**
 * The table's side of the weekly report. Settings are one item with an attribute per channel
 * (`weeklyset#channels`): the sweep reads every schedule with one GetItem, no Scan. Claims and
 * baselines are `weekly#<channel>#…` items. Errors of the backing store propagate.
 */
export interface WeeklyStore {
  settings(): Promise<Map<string, WeeklySetting>>;
  putSetting(channel: string, setting: WeeklySetting): Promise<void>;
  claim(channel: string, week: string, nowMs: number): Promise<WeeklyClaim>;
  /** Records the posted message's ts before anything else can fail: a retry then never posts again. */
  recordPosted(channel: string, week: string, token: string, ts: string): Promise<void>;
  finish(channel: string, week: string, token: string): Promise<void>;
  /** Ends the lease now (after a failure), keeping the failure for whoever looks. */
  release(channel: string, week: string, token: string, failure: string): Promise<void>;
  baseline(channel: string, projectId: string): Promise<WeeklyBaseline | null>;
  putBaseline(channel: string, baseline: WeeklyBaseline): Promise<void>;
}

/**
 * The trend charts of a posted report: called once, right after the report is posted (a retry that
 * finds it posted never calls it again), with the channel id Slack answered and the report's ts, to
 * upload one chart per project into its thread. A failure there is the chart's own (counted by its
 * owner); the report is already posted.
 */
export type WeeklyChartHook = (input: { channel: string; ts: string; projects: readonly { id: string; name: string }[] }) => Promise<void>;

/** Queue message body of a weekly sweep (EventBridge Scheduler sends it; `bridge trigger weekly` too). */
export interface WeeklySweepMessage {
  kind: typeof QUEUE_MESSAGE_KINDS.weeklySweep;
  /** Only this channel (`bridge trigger weekly --channel C`). */
  channel?: string | undefined;
  /** Post now whatever the channels' schedules say (`bridge trigger weekly`); the week's claim still holds. */
  now?: true | undefined;
}

/** The stage's defaults and the channels that get a report without asking. */
export interface WeeklyOptions {
  /** The stage's zone (`timeZone` in the stage file); the default schedule is Monday 09:00 there. */
  timeZone: string;
  defaultChannel: string;
  projectChannels: Readonly<Record<string, string>>;
  /** Dashboard link template (validated at cold start), for the project's name. */
  dashboardUrlTemplate?: string | undefined;
  /** The stage's per-label minimum changes (`noiseMinimums`), as the digest uses them. */
  noiseMinimums?: Readonly<Record<string, number>> | undefined;
}

export interface WeeklyDeps {
  store: WeeklyStore;
  /** Snapshots: the project's figures and run history as the digest last stored them. */
  digests: Pick<DigestStore, 'getSnapshot'>;
  subscriptions: Pick<SubscriptionStore, 'forChannel'>;
  /** The project names of home channels' projects (subscriptions carry their own). */
  listProjects: () => Promise<readonly { id: string; name: string }[]>;
  slack: SlackPoster;
  pacer?: ChannelPacer | undefined;
  clock: Clock;
  log: Log;
  metrics: Metrics;
  options: WeeklyOptions;
  deadline?: (() => number) | undefined;
  sleep?: ((ms: number) => Promise<void>) | undefined;
  /** Unset when charts are off (see WeeklyChartHook). */
  chart?: WeeklyChartHook | undefined;
  /** Whose reports (its stores, read API and home channels above); none = the stack's. */
  tenant?: Tenant | undefined;
}
