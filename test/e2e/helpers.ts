/** Shared helpers of the end-to-end tests: a stack tuned for tests, the CLI beside it, and views of what reached Slack. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/stack';
import type { PostedMessage } from '../../local/slack/server';
import { signPayload } from '../../shared/signature';

// Here for the files that wait on a stack; a file that needs only the wait imports ../support/wait-until.
export { waitUntil } from '../support/wait-until';

/**
 * A stack on free ports with fast webhook retries and no log output. The visibility timeout stays
 * well above one digest invocation even on a loaded machine: a message that reappears while its
 * first invocation still runs is received by the other poller, finds the posting claim busy and is
 * hidden for the rest of the posting lease (120 s). Files that exercise retries shorten both.
 */
export function startTestStack(overrides: LocalStackOptions = {}): Promise<LocalStack> {
  return startLocalStack({
    port: 0,
    retryScale: 0.001,
    visibilityTimeoutSeconds: 10,
    maxReceiveCount: 2,
    logLevel: 'silent',
    ...overrides,
  });
}

/** A test stack with its ready file written, and `npx bridge` run in-process against it as a user beside `npm start` runs it. */
export interface CliStack {
  stack: LocalStack;
  /** `npx bridge <argv>` (stdin `stdinText` when given), with the ready file as its default and no colour. */
  bridge(argv: string[], stdinText?: string): Promise<{ code: number; out: string; err: string }>;
  /** Closes the stack and removes its ready file. */
  close(): Promise<void>;
}

/** `startTestStack(overrides)` and its ready file in a temporary folder named after `name`. */
export async function startCliStack(name: string, overrides: LocalStackOptions = {}): Promise<CliStack> {
  // Imported here, not at the top: the files that only need a stack do not load the CLI.
  const [{ run }, { bufferIo }, stack] = await Promise.all([import('../../cli/main'), import('../../cli/io'), startTestStack(overrides)]);
  const dir = mkdtempSync(join(tmpdir(), `bridge-${name}-`));
  const readyFile = join(dir, 'ready.json');
  writeFileSync(readyFile, JSON.stringify(stack.readyInfo()));
  return {
    stack,
    async bridge(argv, stdinText) {
      const io = bufferIo({ env: { NO_COLOR: '1' }, defaultReadyFile: readyFile, ...(stdinText !== undefined ? { stdinText } : {}) });
      const code = await run(argv, io);
      return { code, out: io.stdout.text(), err: io.stderr.text() };
    },
    async close() {
      await stack.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The local Slack server of a stack (the tests never use a real Slack). */
export function slackOf(stack: LocalStack): NonNullable<LocalStack['slack']> {
  if (!stack.slack) throw new Error('the stack has no local Slack server');
  return stack.slack;
}

export function simulatorOf(stack: LocalStack): NonNullable<LocalStack['simulator']> {
  if (!stack.simulator) throw new Error('the stack has no simulator');
  return stack.simulator;
}

export function eventIdOf(message: PostedMessage): string | undefined {
  const metadata = message.metadata as { event_payload?: { event_id?: unknown } } | undefined;
  const id = metadata?.event_payload?.event_id;
  return typeof id === 'string' ? id : undefined;
}

export interface PostedThread {
  main: PostedMessage;
  replies: PostedMessage[];
}

/** Top-level messages posted for an event (found by the message metadata), each with its replies. */
export function threadsFor(stack: LocalStack, eventId: string): PostedThread[] {
  const messages = slackOf(stack).messages();
  return messages
    .filter((m) => m.thread_ts === undefined && eventIdOf(m) === eventId)
    .map((main) => ({ main, replies: messages.filter((m) => m.thread_ts === main.ts) }));
}

/** A project's first digest is a one-message baseline: post one per project, so the next run's digest has a thread; then clear Slack. */
export async function postBaselines(stack: LocalStack, projectIds: readonly string[]): Promise<void> {
  for (const projectId of projectIds) await simulatorOf(stack).triggerRun(projectId).delivered;
  await stack.waitForIdle();
  slackOf(stack).reset();
}

/** Every top-level message posted so far. */
export function topLevelMessages(stack: LocalStack): PostedMessage[] {
  return slackOf(stack)
    .messages()
    .filter((m) => m.thread_ts === undefined);
}

export interface EventBody {
  id: string;
  body: string;
}

/** A run.completed body as the service would send it. */
export function runCompletedBody(projectId: string, overrides: { id?: string; createdAt?: string } = {}): EventBody {
  const id = overrides.id ?? randomUUID();
  const body = JSON.stringify({
    id,
    type: 'run.completed',
    created_at: overrides.createdAt ?? new Date().toISOString(),
    data: { project_id: projectId, run_id: randomUUID(), status: 'completed', answers: 120 },
  });
  return { id, body };
}

/** POSTs a delivery to the stack's webhook the way the service does, signed with `secret` at `t`. */
export function deliver(
  stack: LocalStack,
  event: EventBody,
  signing: { secret: string; t: number },
): Promise<{ status: number; body: unknown }> {
  return deliverTo(stack.webhookUrl, event, signing);
}

/** POSTs a delivery to a webhook URL (the stack's, or a connection's `/webhook/<id>`) the way the service does. */
export async function deliverTo(
  url: string,
  event: EventBody,
  signing: { secret: string; t: number },
): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      'User-Agent': 'Service-Webhooks/1',
      'X-Service-Event': 'run.completed',
      'X-Service-Delivery': event.id,
      'X-Service-Signature': signPayload(signing.secret, signing.t, event.body),
    },
    body: event.body,
  });
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text) as unknown;
  } catch {
    // Not JSON: keep the text.
  }
  return { status: response.status, body };
}

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
