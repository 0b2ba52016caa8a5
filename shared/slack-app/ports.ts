/**
 * Ports of the Slack app (slash commands and buttons) and the vocabulary of `/visibility` commands:
 * what a command parses into and what a deferred command carries through its queue. A leaf: the
 * command table (./commands.ts) and its handlers import these types, never the other way round.
 * Subscriptions and pacing, shared with the digest, are in ../ports.ts.
 */
import type { DigestMode, QUEUE_MESSAGE_KINDS } from '../contracts';
import type { Actor, ChannelFilter, SubscriptionStore, Clock, DigestStore, GapsResult, Log, Metrics, QuietHoursStore } from '../ports';
import type { Project, VisibilityOverview } from '../read-api-types';
import type { ChannelRouting } from '../digest/deps';
import type { Tenant } from '../tenancy';
import type { WeeklyStore } from '../weekly/ports';
import type { HomeRequest, HomeViews } from './home/ports';

// --- Commands ------------------------------------------------------------------------------------

/**
 * What each verb's arguments parse into. The key set is the list of verbs: a verb added here fails
 * `tsc` in the command table (./commands.ts) until it has its parser, usage, help and handler.
 */
export interface CommandArgs {
  subscribe: { project: string };
  unsubscribe: { project: string };
  list: object;
  projects: object;
  status: { project: string };
  mute: { project: string; durationMs: number; durationLabel: string };
  unmute: { project: string };
  mode: { project: string; mode: DigestMode };
  /** `filter: null` removes the channel's filter of the project. */
  filter: { project: string; filter: ChannelFilter | null };
  /** `window: null` ends the channel's quiet hours; `timeZone` undefined = the stage's zone. */
  quiet: { window: { startMinute: number; endMinute: number; timeZone: string | undefined } | null };
  /** `on`, `off`, or `at` a day (1 = Monday) and minute of the day, in a zone (none: the stage's). */
  weekly: { action: 'on' | 'off' | 'at'; day?: number | undefined; minuteOfDay?: number | undefined; timeZone?: string | undefined };
  help: object;
}
export type CommandVerb = keyof CommandArgs;

/** Verbs answered later via response_url (they need the read API, whose latency is not bounded below 3 s). */
export type DeferredVerb = 'subscribe' | 'status' | 'projects';

/** A parsed command of one verb: `kind` is the verb, the rest its arguments. */
export type CommandOf<V extends CommandVerb> = V extends CommandVerb ? { kind: V } & CommandArgs[V] : never;

export type ParsedCommand = { [V in CommandVerb]: CommandOf<V> }[CommandVerb];
export type DeferredCommand = { [V in DeferredVerb]: CommandOf<V> }[DeferredVerb];

export type VisibilityCommand =
  | ParsedCommand
  | { kind: 'invalid'; verb: CommandVerb; problem: string }
  | { kind: 'unknown'; verb: string; suggestion?: CommandVerb | undefined };

/** Where a command was typed and where its answer goes. */
export interface CommandContext {
  channel: string;
  actor: Actor;
  responseUrl: string;
  /** The tenants the command's team reaches (./tenant-scope.ts), decided by the Slack function; none = not scoped (the stack's alone). */
  tenants?: readonly Tenant[] | undefined;
}

/** The Slack workspace a request came from: its team, and its Grid org when it has one. */
export interface SlackTeam {
  teamId: string;
  enterpriseId?: string | undefined;
}

/** One tenant's part of what a team's answers read and change. */
export interface TenantReach {
  tenant: Tenant;
  store: SubscriptionStore;
  /** Its snapshots (`status`'s latest run, `filter engines=`, a button's project). */
  snapshots?: Pick<DigestStore, 'getSnapshot'> | undefined;
  /** Its read API: the digest function's reaches only (deferred answers). */
  readApi?: (ProjectDirectory & StatusSource) | undefined;
  /** Where its digests go (the Home tab's home channels): the digest function's reaches only. */
  routes?: ChannelRouting | undefined;
  /** Whether the bot can post in a channel, with the token its digests post with (`subscribe`): the digest function's reaches only. */
  channels?: ChannelAccess | undefined;
}

/** A tenant's stores (and read API); undefined for a connection removed since the request was scoped. */
export interface TenantReaches {
  reach(tenant: Tenant): Promise<TenantReach | undefined>;
}

/** The Slack function's: which tenants a team reaches (the stage's own, linked connections), and their stores. */
export interface TeamTenants extends TenantReaches {
  /** undefined: the stage has no connections, and answers are the stack's as they were before tenants. */
  of(team: SlackTeam): Promise<Tenant[] | undefined>;
}

/** Queue message body of a deferred command (`kind` tells it from a webhook event envelope): the parsed command, whole. */
export interface DeferredSlackCommand {
  kind: typeof QUEUE_MESSAGE_KINDS.slackCommand;
  command: DeferredCommand;
  context: CommandContext;
  receivedAtMs: number;
  /** A "Share in channel" click of a read's answer: answer in the channel and delete the ephemeral one. Reads only. */
  share?: true | undefined;
}

/** Whether a verb only reads (open to every member, answered ephemerally) or changes subscriptions (the policy decides). */
export type VerbAccess = 'read' | 'change';

/** What a "Share in channel" button re-answers, in the channel it was answered in. */
export interface ShareTarget {
  verb: 'status' | 'projects' | 'list';
  /** `status` only: the project's id, as the answer found it. */
  projectId?: string | undefined;
  channel: string;
}

// --- Ports ---------------------------------------------------------------------------------------

/** What the read key can see (`GET /v1/projects`). */
export interface ProjectDirectory {
  listProjects(): Promise<Project[]>;
}

/** What `status` reads, as the digest does: the figures (`…/visibility`) and the gaps (`…/gaps`). */
export interface StatusSource {
  getVisibility(projectId: string): Promise<VisibilityOverview>;
  getGapsWithSkipped(projectId: string): Promise<GapsResult>;
}

/** The digest's settings `status` renders with, so its answer reads like the digest. */
export interface StatusOptions {
  dashboardUrlTemplate?: string | undefined;
  /** page_size the gaps are read with: a full page reads "50+". */
  gapsPageSize?: number | undefined;
  /** Per-label minimum changes (the digest's `NoiseMinimums`). */
  noiseMinimums?: Readonly<Record<string, number>> | undefined;
}

/** A message for Slack's response_url (or the body of a slash-command acknowledgement). */
export interface SlackReply {
  response_type: 'ephemeral' | 'in_channel';
  text: string;
  blocks?: unknown[] | undefined;
  /** Interactions only: replace the message the button was on. */
  replace_original?: boolean | undefined;
  /** Interactions only: delete the message the button was on (an ephemeral one included). */
  delete_original?: boolean | undefined;
}

/** Posts to a response_url (valid 30 minutes, up to 5 times). Throws when Slack does not accept it. */
export interface Responder {
  respond(responseUrl: string, reply: SlackReply): Promise<void>;
}

/** Where the Slack endpoint hands deferred commands (and App Home publishes): their own queue, answered by the digest function. */
export interface DeferredCommandQueue {
  send(message: DeferredSlackCommand | HomeRequest): Promise<void>;
}

/**
 * The members of a Slack user group (`usergroups.users.list`, scope `usergroups:read`). Throws the
 * domain's errors (Unavailable, NeedsOperatorFix) when the group can't be read: the caller refuses.
 */
export interface UserGroupMembers {
  membersOf(groupId: string): Promise<ReadonlySet<string>>;
}

/** Whether the bot can post in a channel (`conversations.info`), as `subscribe` checks it first. */
export type PostingAccess =
  | { canPost: true }
  /** `botUserId`: the bot's user id when known, so the answer can name whom to invite. */
  | { canPost: false; reason: 'not_member' | 'archived' | 'not_found'; botUserId?: string | undefined };

/** Throws the domain's errors (Unavailable, NeedsOperatorFix: e.g. a missing `channels:read` scope) when Slack can't say. */
export interface ChannelAccess {
  postingAccess(channel: string): Promise<PostingAccess>;
}

/** Who may change subscriptions: everyone, an allow-list of user ids, or the members of a user group. */
export type ChangeRule =
  | { kind: 'everyone' }
  | { kind: 'users'; userIds: readonly string[] }
  /** Members of a Slack user group (read with `usergroups.users.list`, scope `usergroups:read`). */
  | { kind: 'userGroup'; groupId: string };

/** The stage's `slackAccess`, validated (./policy.ts parses it). */
export interface SlackAccessPolicy {
  changes: ChangeRule;
  /** Project id → the channel ids where that project's subscriptions may be changed; a project not named: any channel. */
  changeChannels: Readonly<Record<string, readonly string[]>>;
}

/**
 * Signs the values of "Share in channel" buttons (./interactions.ts `shareValuesFrom`, over the
 * stage's action-signing key); a click's value is verified where the click is parsed.
 */
export interface ShareValues {
  /** undefined when the stage has no action-signing key: the answer then has no button. */
  encode(target: ShareTarget): Promise<string | undefined>;
}

/** What the digest function's worker of deferred commands needs of the Slack app besides the digest's own peers. */
export interface SlackAppWorkerDeps {
  access: SlackAccessPolicy;
  groups: UserGroupMembers;
  channels: ChannelAccess;
  /** Publishes App Home tabs (`views.publish`); none = a publish fails saying what to deploy. */
  views?: HomeViews | undefined;
}

/** Who may change what (the stage's `slackAccess`), and what deciding it reads. */
export interface AccessDeps {
  access: SlackAccessPolicy;
  groups: UserGroupMembers;
  metrics: Metrics;
  log: Log;
}

/** The engines a project's runs report, as the bridge last stored them; undefined before its first run digested. */
export interface ProjectEngines {
  enginesOf(projectId: string): Promise<readonly string[] | undefined>;
}

/** What inline commands need: DynamoDB (and a cached user-group read) only, so they answer within Slack's 3 s. */
export interface InlineDeps extends AccessDeps {
  store: SubscriptionStore;
  clock: Clock;
  shares: ShareValues;
  /** A channel's quiet hours (`quiet`, shown by `list`), and the stage's zone for a window typed without one; none = not set up. */
  quietHours?: { store: QuietHoursStore; defaultTimeZone: string } | undefined;
  /** `filter engines=`: the engines a project's runs have (its stored snapshot); none = names are not checked. */
  engines?: ProjectEngines | undefined;
  /** `weekly`: the channels' schedules and the stage's zone; none = the verb answers that reports are not set up. */
  weekly?: { store: Pick<WeeklyStore, 'settings' | 'putSetting'>; timeZone: string } | undefined;
  /** Answers scoped by team (./tenant-scope.ts): the Slack function's; none = the stack's stores answer every team. */
  tenants?: TeamTenants | undefined;
}

/** What deferred commands need besides: the read API, response_url and whether the bot can post in a channel. */
export interface DeferredDeps extends InlineDeps {
  directory: ProjectDirectory;
  status: StatusSource;
  responder: Responder;
  channels: ChannelAccess;
  /** How `status` renders (the digest's link template, page size, noise minimums); none = defaults. */
  statusOptions?: StatusOptions | undefined;
  /** The digest's snapshots: `status` links to the project's latest run and says its change; none = no run line. */
  snapshots?: Pick<DigestStore, 'getSnapshot'> | undefined;
  /** The tenants' stores and read APIs a scoped command (its context names tenants) is answered over; none = the stack's. */
  reaches?: TenantReaches | undefined;
  /** Set on a scoped answer: the routes of a project's tenant (undefined: not one of the answer's tenants). */
  routingOf?: ((projectId: string) => ChannelRouting | undefined) | undefined;
  /** Set on a scoped answer: the channel check of a project's tenant, with its own token (undefined: none known). */
  channelsOf?: ((projectId: string) => ChannelAccess | undefined) | undefined;
}

/** A "Share in channel" of `status` / `projects` goes back through the deferred queue. */
export interface ShareDeps {
  queue: DeferredCommandQueue;
}

/** A verified Slack request as the replay guard knows it: its MAC in one spelling and its own timestamp. */
export interface SignedRequestId {
  /** The request's HMAC as lower-case hex, unique per (timestamp, body) whatever the header's spelling. */
  mac: string;
  /** The request's `X-Slack-Request-Timestamp` (seconds): its record lasts until this plus the tolerance. */
  timestampSeconds: number;
}

/**
 * Slack requests already acted on, by MAC: a replayed request (the same MAC, however its signature
 * header spells it, while its timestamp still verifies) is answered but not acted on again. Throws
 * when the store can't say (the request is then refused: nothing done).
 */
export interface ReplayGuard {
  /** True the first time the request is seen while it can still verify; false for a replay. */
  firstSeen(request: SignedRequestId, nowMs: number): Promise<boolean>;
}
