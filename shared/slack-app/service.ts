/**
 * The `/visibility` command logic over ports, dispatched through the command table (./commands.ts).
 * Slack wants an answer within 3 s, so inline verbs (DynamoDB only) are answered in the
 * acknowledgement, and deferred ones (they need the read API, whose latency is not bounded below
 * 3 s: 429 + Retry-After) are acknowledged at once, queued whole as a `DeferredSlackCommand`, and
 * answered by the digest function via response_url.
 */
import { QUEUE_MESSAGE_KINDS } from '../contracts';
import type { Actor } from '../ports';
import { isRecord } from '../util';
import { refuse } from './access';
import { accessOf, COMMANDS, parseCommandText, usageOf, type SlashCommandRequest } from './commands';
import { authorizeUser } from './policy';
import type {
  CommandContext,
  CommandVerb,
  DeferredCommand,
  DeferredDeps,
  DeferredSlackCommand,
  DeferredVerb,
  InlineDeps,
  SlackReply,
  VisibilityCommand,
} from './ports';
import * as reply from './replies';
import { parseTenants, scopedDeferredDeps, scopedInlineDeps } from './tenant-scope';

export interface CommandAck {
  /** The HTTP body of the acknowledgement (JSON). */
  reply: SlackReply;
  /** Work to enqueue before acknowledging; absent when the reply is the whole answer. */
  deferred?: DeferredSlackCommand | undefined;
  /** The store failed: the reply says so; the caller logs and counts this. */
  failure?: unknown;
}

export function isDeferred(command: VisibilityCommand): command is DeferredCommand {
  return isVerb(command.kind) && COMMANDS[command.kind].deferred;
}

function isVerb(kind: string): kind is CommandVerb {
  return Object.hasOwn(COMMANDS, kind);
}

export async function answerSlashCommand(request: SlashCommandRequest, deps: InlineDeps): Promise<CommandAck> {
  const command = parseCommandText(request.text);
  const base: CommandContext = { channel: request.channelId, actor: actorOf(request), responseUrl: request.responseUrl };
  // Who may change: decided before anything is done or queued (where: once the project is known).
  if (isVerb(command.kind) && accessOf(command.kind) === 'change') {
    const decision = await authorizeUser(request.userId, deps.access.changes, deps.groups);
    if (!decision.allowed) return { reply: refuse(decision.refusal, deps) };
  }
  try {
    const context = await scopedContext(base, request, deps);
    if (isDeferred(command)) {
      return {
        reply: reply.ephemeral(ackOf(command)),
        deferred: { kind: QUEUE_MESSAGE_KINDS.slackCommand, command, context, receivedAtMs: deps.clock.now() },
      };
    }
    return { reply: await answerInline(command, context, await inlineDepsOf(context, deps)) };
  } catch (failure) {
    return { reply: reply.unavailableReply("The bridge's subscription table"), failure };
  }
}

/** The context with the tenants the request's team reaches, when answers are scoped by team. */
async function scopedContext(context: CommandContext, request: SlashCommandRequest, deps: InlineDeps): Promise<CommandContext> {
  if (deps.tenants === undefined) return context;
  const tenants = await deps.tenants.of({ teamId: request.teamId, enterpriseId: request.enterpriseId });
  return tenants === undefined ? context : { ...context, tenants };
}

/** The deps an inline answer runs with: the view over its context's tenants, or the stack's stores when not scoped. */
export function inlineDepsOf<D extends InlineDeps>(context: CommandContext, deps: D): Promise<D> {
  if (context.tenants === undefined || deps.tenants === undefined) return Promise.resolve(deps);
  return scopedInlineDeps(deps, context.tenants, deps.tenants);
}

/** The deps a deferred answer runs with: the view over its context's tenants (their read APIs), or the stack's when not scoped. */
export function deferredDepsOf<D extends DeferredDeps>(context: CommandContext, deps: D): Promise<D> {
  if (context.tenants === undefined || deps.reaches === undefined) return Promise.resolve(deps);
  return scopedDeferredDeps(deps, context.tenants, deps.reaches);
}

function actorOf(request: SlashCommandRequest): Actor {
  return { userId: request.userId, ...(request.userName ? { userName: request.userName } : {}) };
}

/**
 * The table's entry for a command of its own verb. TypeScript does not correlate a verb with its
 * command across the union, so the entry is viewed through the one signature every entry satisfies.
 */
function deferredSpec(verb: DeferredVerb) {
  return COMMANDS[verb] as unknown as {
    ack(command: DeferredCommand): string;
    words(command: Record<string, unknown>): string[];
    answer(command: DeferredCommand, context: CommandContext, deps: DeferredDeps): Promise<SlackReply>;
  };
}

function inlineSpec(verb: InlineVerb) {
  return COMMANDS[verb] as unknown as { answer(command: InlineCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> };
}

function ackOf(command: DeferredCommand): string {
  return deferredSpec(command.kind).ack(command);
}

type InlineCommand = Exclude<VisibilityCommand, DeferredCommand>;
type InlineVerb = Exclude<CommandVerb, DeferredVerb>;

function answerInline(command: InlineCommand, context: CommandContext, deps: InlineDeps): Promise<SlackReply> {
  if (command.kind === 'invalid') return Promise.resolve(reply.usageReply(command.verb, usageOf(command.verb), command.problem));
  if (command.kind === 'unknown') {
    const suggestion = command.suggestion === undefined ? undefined : usageOf(command.suggestion);
    return Promise.resolve(reply.unknownReply(command.verb, suggestion));
  }
  return inlineSpec(command.kind).answer(command, context, deps);
}

/** Runs a deferred command in the digest function and answers via response_url. Throws only when the answer can't be delivered. */
export async function runDeferredCommand(work: DeferredSlackCommand, deps: DeferredDeps): Promise<void> {
  let answer: SlackReply;
  try {
    answer = await deferredSpec(work.command.kind).answer(work.command, work.context, await deferredDepsOf(work.context, deps));
  } catch {
    // The read API or the table failed: say so now rather than retry past the user's attention span.
    answer = reply.unavailableReply("The visibility service's read API or the bridge's table");
  }
  if (work.share) await shareAnswer(answer, work.context, deps.responder);
  else await deps.responder.respond(work.context.responseUrl, answer);
}

/**
 * A "Share in channel" click: the answer posted in the channel for everyone, then the ephemeral one
 * the button was on deleted. An error (the project is gone, the service failed) stays ephemeral.
 */
export async function shareAnswer(answer: SlackReply, context: CommandContext, responder: DeferredDeps['responder']): Promise<void> {
  if (!reply.isShareable(answer)) {
    await responder.respond(context.responseUrl, answer);
    return;
  }
  await responder.respond(context.responseUrl, reply.asShared(answer, context.actor));
  try {
    await responder.respond(context.responseUrl, reply.deleteOriginal());
  } catch {
    // Shared already: a retry would post it twice. The ephemeral copy goes away with the next reload.
  }
}

/**
 * Reads a queue message body as a deferred command; null when it is something else (e.g. a webhook
 * event envelope). The command travels parsed and whole; it is checked by parsing its verb's
 * arguments again from the fields it carries, so a malformed message can't smuggle an unchecked shape.
 */
export function parseDeferredSlackCommand(body: unknown): DeferredSlackCommand | null {
  if (!isRecord(body) || body['kind'] !== QUEUE_MESSAGE_KINDS.slackCommand) return null;
  const { command, context } = body;
  if (!isRecord(command) || !isRecord(context) || !isRecord(context['actor'])) return null;
  const { channel, responseUrl } = context;
  const { userId, userName } = context['actor'];
  if (typeof channel !== 'string' || typeof responseUrl !== 'string' || typeof userId !== 'string') return null;
  const reparsed = reparse(command);
  if (reparsed === null) return null;
  const tenants = parseTenants(context['tenants']);
  if (context['tenants'] !== undefined && tenants === undefined) return null;
  const actor: Actor = { userId, ...(typeof userName === 'string' ? { userName } : {}) };
  // Only reads are shared; a change is never answered in the channel as a share.
  const share = body['share'] === true && accessOf(reparsed.kind) === 'read';
  if (body['share'] !== undefined && !share) return null;
  return {
    kind: QUEUE_MESSAGE_KINDS.slackCommand,
    command: reparsed,
    context: { channel, actor, responseUrl, ...(tenants === undefined ? {} : { tenants }) },
    receivedAtMs: Number(body['receivedAtMs']) || 0,
    ...(share ? { share: true as const } : {}),
  };
}

/** The carried command, when parsing its own argument words gives it back exactly (every field, not only the project). */
function reparse(command: Record<string, unknown>): DeferredCommand | null {
  const kind = command['kind'];
  if (typeof kind !== 'string' || !isVerb(kind)) return null;
  if (!COMMANDS[kind].deferred) return null;
  const words = deferredSpec(kind as DeferredVerb).words(command);
  const reparsed = parseCommandText([kind, ...words].join(' '));
  return isDeferred(reparsed) && sameFields(reparsed, command) ? reparsed : null;
}

function sameFields(a: object, b: Record<string, unknown>): boolean {
  const entries = Object.entries(a);
  return entries.length === Object.keys(b).length && entries.every(([key, value]) => b[key] === value);
}
