/**
 * One Slack workspace and one project for the model-based test of per-channel delivery
 * (test/unit/channel-delivery-model.test.ts, test/integration/channel-delivery-model.test.ts): the real
 * digest batch handler (runs, deferred commands, quiet-hours sweeps), the real `/visibility` command
 * service and the real button handler, over the stores and the Slack poster a test passes (in-memory
 * doubles, or the DynamoDB adapters on dynalite and the poster on the local Slack server), a fixed clock
 * the test moves, and a read API double whose every run moves every engine (so a run always has news, and
 * only a filter naming no engine of the project can leave nothing of it).
 */
import { randomUUID } from 'node:crypto';
import { QUEUE_MESSAGE_KINDS } from '../../shared/contracts';
import type { QueueRecord } from '../../shared/queue-work';
import type {
  DigestStore,
  QueuedEvent,
  QuietHoursStore,
  ReadApi,
  SlackMessageMetadata,
  SlackPoster,
  SubscriptionStore,
} from '../../shared/ports';
import type { VisibilityOverview } from '../../shared/read-api-types';
import type { GapsResult } from '../../shared/ports';
import { handleButtonAction, type ActionDeps } from '../../shared/slack-app/actions';
import { enginesFromSnapshots } from '../../shared/slack-app/channel-settings';
import { ACTION_IDS } from '../../shared/buttons/ids';
import { actionValueCodec } from '../../shared/buttons/value';
import { parseInteractionForm } from '../../shared/slack-app/interactions';
import { DEFAULT_SLACK_ACCESS_POLICY } from '../../shared/slack-app/policy';
import type { DeferredSlackCommand, SlackReply } from '../../shared/slack-app/ports';
import { answerSlashCommand } from '../../shared/slack-app/service';
import { isRecord } from '../../shared/util';
import { RecordingObserver } from './recording-observer';
import { processTestBatch, type TestQueue, type TestWiring } from './worker-wiring';

export const PROJECT_NAME = 'Northwind';
export const ENGINES = ['ChatGPT', 'Claude'] as const;
const DASHBOARD = 'https://dash.example/p/{project_id}/runs/{run_id}';
const USER = { userId: 'U0ANA', userName: 'ana' };

/** What a top-level message carries that tells which runs it brings: its metadata, and a catch-up's links. */
export interface TopLevelMessage {
  blocks: unknown[];
  metadata: unknown;
}

/** The stores and the Slack side the world runs on. */
export interface WorldPorts {
  subscriptions: SubscriptionStore;
  quietHours: QuietHoursStore;
  store: DigestStore;
  slack: SlackPoster;
  /** The channel's top-level messages as Slack keeps them, oldest first. */
  topLevel(channel: string): Promise<TopLevelMessage[]> | TopLevelMessage[];
}

/** Every run moves every engine by 40 points; the project-wide figure stays, so an engine filter decides what is left. */
class MovingReadApi implements ReadApi {
  runs = 0;
  constructor(private readonly projectId: string) {}

  listProjects() {
    return Promise.resolve([{ id: this.projectId, name: PROJECT_NAME, industry: null }]);
  }
  getVisibility(): Promise<VisibilityOverview> {
    const high = this.runs % 2 === 0;
    return Promise.resolve({
      metrics: [{ label: 'Visibility score', value: 50, caption: null }],
      engines: ENGINES.map((engine, i) => [
        ['engine', engine],
        ['visibility', high === (i === 0) ? 70 : 30],
      ]),
      alerts: [],
    });
  }
  getGaps() {
    return Promise.resolve([]);
  }
  getGapsWithSkipped(): Promise<GapsResult> {
    return Promise.resolve({ gaps: [], skipped: 0 });
  }
  getResults() {
    return Promise.resolve([]);
  }
  getReasoning(): Promise<never> {
    return Promise.reject(new Error('no reasoning cards in this project'));
  }
}

export type SettingsButton = 'mute' | 'mode';

export class DeliveryWorld {
  readonly observer = new RecordingObserver();
  readonly readApi: MovingReadApi;
  /** Run id → event id, to read a catch-up's links back as runs. */
  private readonly eventOfRun = new Map<string, string>();
  private readonly codec = actionValueCodec(['model-test-action-signing-key-0123456789abcdef']);
  private messageIds = 0;

  constructor(
    private readonly ports: WorldPorts,
    readonly projectId: string,
    readonly homeChannel: string,
    public now: number,
  ) {
    this.readApi = new MovingReadApi(projectId);
  }

  private wiring(): TestWiring {
    const noAnswer = { respond: () => Promise.resolve() };
    return {
      readApi: this.readApi,
      slack: this.ports.slack,
      store: this.ports.store,
      deadLetters: { quarantine: () => Promise.reject(new Error('nothing should be quarantined')) },
      channels: { defaultChannel: this.homeChannel, byProject: { [this.projectId]: this.homeChannel } },
      clock: { now: () => this.now },
      log: this.observer,
      metrics: this.observer,
      options: { dashboardUrlTemplate: DASHBOARD },
      subscriptions: this.ports.subscriptions,
      quietHours: this.ports.quietHours,
      responder: noAnswer,
      actionValues: () => Promise.resolve(this.codec),
      slackApp: {
        access: DEFAULT_SLACK_ACCESS_POLICY,
        groups: { membersOf: () => Promise.resolve(new Set<string>()) },
        channels: { postingAccess: () => Promise.resolve({ canPost: true as const }) },
      },
    };
  }

  private actionDeps(): ActionDeps {
    return {
      store: this.ports.subscriptions,
      clock: { now: () => this.now },
      access: DEFAULT_SLACK_ACCESS_POLICY,
      groups: { membersOf: () => Promise.resolve(new Set<string>()) },
      shares: { encode: () => Promise.resolve(undefined) },
      quietHours: { store: this.ports.quietHours, defaultTimeZone: 'UTC' },
      // `filter engines=` checks the names against the project's stored snapshot, as the Slack function does.
      engines: enginesFromSnapshots(this.ports.store),
      metrics: this.observer,
      log: this.observer,
      responder: { respond: () => Promise.resolve() },
      queue: { send: () => Promise.reject(new Error('no share is clicked here')) },
    };
  }

  /** A message through its queue's worker; a record it hands back is delivered again, as SQS would, at most twice more. */
  private async deliver(body: string, queue: TestQueue = 'digest'): Promise<void> {
    const record: QueueRecord = { messageId: `m${++this.messageIds}`, body };
    for (let receive = 1; receive <= 3; receive++) {
      const [outcome] = await processTestBatch([{ ...record, receiveCount: receive }], this.wiring(), queue);
      if (outcome?.ok) return;
    }
    const last = this.observer.entries.filter((e) => e.level === 'warn' || e.level === 'error').at(-1);
    throw new Error(`the digest handler failed the message three times: ${last?.message ?? '?'} ${JSON.stringify(last?.fields ?? {})}`);
  }

  /** `/visibility <text>` typed in the channel: answered inline, or queued and answered by the digest function. */
  async command(channel: string, text: string): Promise<SlackReply> {
    const ack = await answerSlashCommand(
      {
        command: '/visibility',
        text,
        channelId: channel,
        userId: USER.userId,
        userName: USER.userName,
        responseUrl: 'https://hooks.slack.com/commands/T1/1/x',
        triggerId: 't',
        teamId: 'T1',
      },
      this.actionDeps(),
    );
    if (ack.failure !== undefined) throw new Error('the command failed', { cause: ack.failure });
    if (ack.deferred !== undefined) await this.deliver(JSON.stringify(ack.deferred satisfies DeferredSlackCommand), 'commands');
    return ack.reply;
  }

  /** A run of the project completes now; its event id. */
  async run(): Promise<string> {
    this.readApi.runs += 1;
    const runId = `r${this.readApi.runs}`;
    const event = {
      id: randomUUID(),
      type: 'run.completed',
      created_at: new Date(this.now).toISOString(),
      data: { project_id: this.projectId, run_id: runId, status: 'completed', answers: 400 },
    };
    this.eventOfRun.set(runId, event.id);
    const queued: QueuedEvent = { event, received_at: event.created_at };
    await this.deliver(JSON.stringify(queued));
    return event.id;
  }

  /** The 5-minute quiet-hours sweep. */
  sweep(): Promise<void> {
    return this.deliver(JSON.stringify({ kind: QUEUE_MESSAGE_KINDS.quietCatchUp }));
  }

  /**
   * A click on a settings button of the channel's newest digest, as Slack sends it (the form body with the
   * button's signed value, the channel clicked in, the message's blocks); false when no digest there has one.
   */
  async click(channel: string, button: SettingsButton): Promise<boolean> {
    const messages = await this.ports.topLevel(channel);
    const ids: readonly string[] = button === 'mute' ? [ACTION_IDS.mute7d] : [ACTION_IDS.onlyChanges, ACTION_IDS.fullDigests];
    for (const message of [...messages].reverse()) {
      const element = buttonsOf(message.blocks).find((b) => ids.includes(String(b['action_id'])));
      if (element === undefined) continue;
      const payload = {
        type: 'block_actions',
        user: { id: USER.userId, username: USER.userName },
        response_url: 'https://hooks.slack.com/actions/T1/1/x',
        channel: { id: channel },
        actions: [{ action_id: element['action_id'], value: element['value'] }],
        message: { blocks: message.blocks },
      };
      const parsed = parseInteractionForm(new URLSearchParams({ payload: JSON.stringify(payload) }).toString(), this.codec);
      if (!parsed.ok) throw new Error(`the click was refused: ${parsed.problem}`);
      await handleButtonAction(parsed.interaction, this.actionDeps());
      return true;
    }
    return false;
  }

  /** Event id → how many top-level messages of the channel bring that run (its digest, or a catch-up listing it). */
  async deliveries(channel: string): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    const add = (eventId: string) => counts.set(eventId, (counts.get(eventId) ?? 0) + 1);
    for (const message of await this.ports.topLevel(channel)) {
      const metadata = message.metadata as SlackMessageMetadata | undefined;
      if (metadata?.event_type === 'visibility_digest') add(String(metadata.event_payload['event_id']));
      if (metadata?.event_type === 'visibility_quiet_catch_up')
        for (const [, runId] of JSON.stringify(message.blocks).matchAll(/\/runs\/(r\d+)\|open/g))
          add(this.eventOfRun.get(runId ?? '') ?? `?${runId}`);
    }
    return counts;
  }
}

function buttonsOf(blocks: readonly unknown[]): Record<string, unknown>[] {
  return blocks.flatMap((block) =>
    isRecord(block) && block['type'] === 'actions' && Array.isArray(block['elements']) ? block['elements'].filter(isRecord) : [],
  );
}
