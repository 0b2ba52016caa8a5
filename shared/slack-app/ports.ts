/**
 * Ports of the Slack app (slash commands and buttons) and the vocabulary of `/visibility` commands:
 * what a command parses into and what a deferred command carries through its queue. A leaf: the
 * command table (./commands.ts) and its handlers import these types, never the other way round.
 * Subscriptions and pacing, shared with the digest, are in ../ports.ts.
 */
import type { DigestMode, QUEUE_MESSAGE_KINDS } from '../contracts';
import type { Actor, SubscriptionStore, Clock } from '../ports';
import type { Project, VisibilityOverview } from '../read-api-types';

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
}

/** Queue message body of a deferred command (`kind` tells it from a webhook event envelope): the parsed command, whole. */
export interface DeferredSlackCommand {
  kind: typeof QUEUE_MESSAGE_KINDS.slackCommand;
  command: DeferredCommand;
  context: CommandContext;
  receivedAtMs: number;
}

// --- Ports ---------------------------------------------------------------------------------------

/** What the read key can see (`GET /v1/projects`). */
export interface ProjectDirectory {
  listProjects(): Promise<Project[]>;
}

/** The current figures of a project (`GET /v1/projects/{id}/visibility`), for `status`. */
export interface StatusSource {
  getVisibility(projectId: string): Promise<VisibilityOverview>;
}

/** A message for Slack's response_url (or the body of a slash-command acknowledgement). */
export interface SlackReply {
  response_type: 'ephemeral' | 'in_channel';
  text: string;
  blocks?: unknown[] | undefined;
  /** Interactions only: replace the message the button was on. */
  replace_original?: boolean | undefined;
}

/** Posts to a response_url (valid 30 minutes, up to 5 times). Throws when Slack does not accept it. */
export interface Responder {
  respond(responseUrl: string, reply: SlackReply): Promise<void>;
}

/** Where the Slack endpoint hands deferred commands: their own queue, answered by the digest function. */
export interface DeferredCommandQueue {
  send(message: DeferredSlackCommand): Promise<void>;
}

/** What inline commands need: DynamoDB only, so they answer within Slack's 3 s. */
export interface InlineDeps {
  store: SubscriptionStore;
  clock: Clock;
}

/** What deferred commands need besides: the read API and response_url. */
export interface DeferredDeps extends InlineDeps {
  directory: ProjectDirectory;
  status: StatusSource;
  responder: Responder;
}
