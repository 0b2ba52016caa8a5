/**
 * The simulator's webhook sender (spec §6 "Delivery format" and "Delivery rules").
 *
 * - POST with Content-Type application/json, User-Agent Service-Webhooks/1, X-Service-Event,
 *   X-Service-Delivery (= body id) and X-Service-Signature, signed with `signPayload` at the send time
 *   of every attempt. The body bytes are identical on every attempt and duplicate of one event.
 * - 2xx is success. 5xx, 429, network errors and timeouts are retried after 30 s, 1 m, 2 m, 4 m and
 *   8 m, each multiplied by `retryScale` (e.g. 0.001 in tests). Any other status, including 3xx
 *   (redirects are never followed), fails at once.
 * - Each attempt times out after `timeoutMs` (10 s).
 * - Failures are counted per webhook per failed attempt, across deliveries, and reset by a success.
 *   At `failureLimit` (15) consecutive failures the webhook is switched off (is_active false): its
 *   pending retries stop and later events are not sent to it ("disabled" in the report).
 * - Test injections: `duplicates` sends the same delivery N extra times; `after` holds a delivery
 *   until a promise settles; `triggerRunsOutOfOrder` delivers the newer of two runs first.
 *
 * Deviation from the real service, for local use: http and loopback URLs are accepted.
 * Retry timers are unref'd: a process whose only work is a pending retry may exit.
 */
import type { HandledEventType, WebhookEvent } from '../../shared/events';
import { randomBytes, randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { signPayload } from '../../shared/signature';
import type { RunInfo, SimulatorData } from './data';
import { deterministicUuid } from './random';

export const USER_AGENT = 'Service-Webhooks/1';
export const RETRY_DELAYS_MS: readonly number[] = [30_000, 60_000, 120_000, 240_000, 480_000];
export const DELIVERY_TIMEOUT_MS = 10_000;
export const FAILURE_LIMIT = 15;
export const MAX_WEBHOOKS = 10;

export interface WebhookSenderOptions {
  /** What the sender needs of the data to trigger runs. */
  data: Pick<SimulatorData, 'hasProject' | 'advanceRun'>;
  /** Multiplies the retry delays (default 1). */
  retryScale?: number;
  /** Per-attempt timeout (default 10 s). */
  timeoutMs?: number;
  now?: () => number;
  fetch?: typeof fetch | undefined;
}

export interface WebhookRegistration {
  url: string;
  /** Signing secret; generated (and returned by `addWebhookWithSecret`) when absent. */
  secret?: string;
  /** Event types to send; all when absent. */
  events?: readonly string[];
}

export interface WebhookInfo {
  id: string;
  url: string;
  events: string[] | null;
  is_active: boolean;
  /** HTTP status of the last attempt, or null when it got none (network error, timeout) or none was made. */
  last_status: number | null;
  last_error: string | null;
  /** ISO time of the last attempt, null before the first. */
  last_attempt_at: string | null;
  consecutive_failures: number;
  created_at: string;
}

export interface DeliveryAttempt {
  webhookId: string;
  eventId: string;
  eventType: string;
  /** 1 for the first attempt of a delivery, 2 for its first retry, … */
  attempt: number;
  /** True for an injected duplicate delivery. */
  duplicate: boolean;
  /** Delay scheduled before this attempt (0 for the first): the scaled retry schedule. */
  scheduledDelayMs: number;
  at: string;
  status: number | null;
  /** 'timeout', 'redirect not followed', 'HTTP <status>', or the network error; null on success. */
  error: string | null;
  outcome: 'success' | 'retry' | 'failed';
  /** True when this attempt switched the webhook off. */
  switchedOff: boolean;
  signature: string;
}

export type DeliveryOutcome = 'delivered' | 'failed' | 'disabled' | 'cancelled';

export interface WebhookDeliveryResult {
  webhookId: string;
  url: string;
  duplicate: boolean;
  outcome: DeliveryOutcome;
  attempts: number;
  lastStatus: number | null;
  error: string | null;
}

export interface DeliveryReport {
  eventId: string;
  type: string;
  /** One entry per webhook and delivery (duplicates included), in completion order. */
  results: WebhookDeliveryResult[];
}

export interface SentEvent {
  event: WebhookEvent;
  /** The exact body bytes sent on every attempt. */
  body: string;
  /** Settles (never rejects) when every delivery of the event has ended. */
  delivered: Promise<DeliveryReport>;
}

export interface SentRun extends SentEvent {
  run: RunInfo;
}

export interface SendOptions {
  /** Send the same delivery this many extra times (same id, same body). */
  duplicates?: number;
  /** Send the duplicates at the same time as the original instead of after it. */
  concurrentDuplicates?: boolean;
  /** Hold every delivery of the event until this settles. */
  after?: Promise<unknown>;
}

/** A receiver as listed, plus what only the sender knows. */
interface Hook extends WebhookInfo {
  secret: string;
  attempts: DeliveryAttempt[];
}

/** A webhook signing secret in the service's format. */
export function generateSecret(): string {
  return `whsec_${randomBytes(24).toString('hex')}`;
}

export class WebhookSender {
  private readonly delays: readonly number[];
  private readonly now: () => number;
  private readonly hooks = new Map<string, Hook>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly stopController = new AbortController();
  private lastCreatedMs = 0;
  private draftCounter = 0;

  constructor(private readonly options: WebhookSenderOptions) {
    const scale = options.retryScale ?? 1;
    if (!(scale >= 0)) throw new Error('retryScale must be a number >= 0');
    this.delays = RETRY_DELAYS_MS.map((ms) => ms * scale);
    this.now = options.now ?? Date.now;
  }

  /** Registers a receiver and returns its id. Throws on a bad URL or when the limit is reached. */
  addWebhook(registration: WebhookRegistration): string {
    return this.addWebhookWithSecret(registration).id;
  }

  /** Registers a receiver; returns its id and secret (the secret is shown here once, as the service does). */
  addWebhookWithSecret(registration: WebhookRegistration): { id: string; secret: string } {
    let url: URL;
    try {
      url = new URL(registration.url);
    } catch {
      throw new Error(`Webhook URL is not a valid URL: ${registration.url}`);
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error('Webhook URL must use http or https');
    if (this.hooks.size >= MAX_WEBHOOKS) throw new Error(`At most ${MAX_WEBHOOKS} webhooks can be registered`);
    const secret = registration.secret ?? generateSecret();
    if (secret === '') throw new Error('Webhook secret must not be empty');
    const id = randomUUID();
    this.hooks.set(id, {
      id,
      url: url.toString(),
      secret,
      events: registration.events === undefined ? null : [...registration.events],
      is_active: true,
      last_status: null,
      last_error: null,
      last_attempt_at: null,
      consecutive_failures: 0,
      created_at: new Date(this.now()).toISOString(),
      attempts: [],
    });
    return { id, secret };
  }

  removeWebhook(id: string): boolean {
    return this.hooks.delete(id);
  }

  listWebhooks(): WebhookInfo[] {
    return [...this.hooks.values()].map(({ secret: _secret, attempts: _attempts, ...info }) => ({
      ...info,
      events: info.events === null ? null : [...info.events],
    }));
  }

  /** Every attempt made to this webhook, oldest first (empty for an unknown id). */
  attempts(webhookId: string): DeliveryAttempt[] {
    return [...(this.hooks.get(webhookId)?.attempts ?? [])];
  }

  /** Advances the project's run and sends run.completed. Throws for an unknown project. */
  triggerRun(projectId: string, options: SendOptions = {}): SentRun {
    const run = this.options.data.advanceRun(projectId);
    const sent = this.sendEvent(
      'run.completed',
      { project_id: projectId, run_id: run.runId, status: 'completed', answers: run.answers },
      options,
    );
    return { ...sent, run };
  }

  /** Sends draft.ready; asset id and version default to a fresh id and 1. */
  sendDraftReady(projectId: string, assetId?: string, version?: unknown, options: SendOptions = {}): SentEvent {
    if (!this.options.data.hasProject(projectId)) throw new Error(`Unknown project "${projectId}"`);
    this.draftCounter += 1;
    const asset = assetId ?? deterministicUuid('asset', projectId, this.draftCounter);
    return this.sendEvent('draft.ready', { project_id: projectId, asset_id: asset, version: version ?? 1 }, options);
  }

  /** Two runs of the project; the newer is delivered first and the older only after it. */
  triggerRunsOutOfOrder(projectId: string): {
    older: SentRun;
    newer: SentRun;
    delivered: Promise<{ older: DeliveryReport; newer: DeliveryReport }>;
  } {
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const older = this.triggerRun(projectId, { after: gate });
    const newer = this.triggerRun(projectId);
    void newer.delivered.then(open);
    const delivered = Promise.all([older.delivered, newer.delivered]).then(([o, n]) => ({ older: o, newer: n }));
    return { older, newer, delivered };
  }

  /** Sends any event type with the given data (ids and counts only, as the service does). */
  sendEvent(type: string, data: Record<string, unknown>, options: SendOptions = {}): SentEvent {
    let createdMs = this.now();
    if (createdMs <= this.lastCreatedMs) createdMs = this.lastCreatedMs + 1;
    this.lastCreatedMs = createdMs;
    const event: WebhookEvent = { id: randomUUID(), type, created_at: new Date(createdMs).toISOString(), data };
    const body = JSON.stringify(event);
    const targets = [...this.hooks.values()].filter((hook) => hook.events === null || hook.events.includes(type));
    const delivered = this.track(this.deliverAll(event, body, targets, options));
    return { event, body, delivered };
  }

  /** Resolves when every delivery started so far has ended. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Cancels retries and in-flight attempts; pending deliveries settle as "cancelled". */
  stop(): void {
    this.stopController.abort();
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private track<T>(promise: Promise<T>): Promise<T> {
    this.pending.add(promise);
    void promise.finally(() => this.pending.delete(promise));
    return promise;
  }

  private async deliverAll(event: WebhookEvent, body: string, targets: Hook[], options: SendOptions): Promise<DeliveryReport> {
    const report: DeliveryReport = { eventId: event.id, type: event.type, results: [] };
    // The gate only orders deliveries; its outcome doesn't matter.
    await options.after?.catch(() => undefined);
    const extra = Math.max(0, Math.floor(options.duplicates ?? 0));
    await Promise.all(
      targets.map(async (hook) => {
        const one = async (duplicate: boolean): Promise<void> => {
          report.results.push(await this.deliver(hook, event, body, duplicate));
        };
        if (options.concurrentDuplicates === true) {
          await Promise.all([one(false), ...Array.from({ length: extra }, () => one(true))]);
        } else {
          await one(false);
          for (let i = 0; i < extra; i += 1) await one(true);
        }
      }),
    );
    return report;
  }

  private async deliver(hook: Hook, event: WebhookEvent, body: string, duplicate: boolean): Promise<WebhookDeliveryResult> {
    const result = (outcome: DeliveryOutcome, attempts: number, lastStatus: number | null, error: string | null) =>
      ({ webhookId: hook.id, url: hook.url, duplicate, outcome, attempts, lastStatus, error }) satisfies WebhookDeliveryResult;
    let lastStatus: number | null = null;
    let lastError: string | null = null;
    for (let attempt = 1; ; attempt += 1) {
      const scheduledDelayMs = attempt === 1 ? 0 : (this.delays[attempt - 2] ?? 0);
      if (attempt > 1) await this.wait(scheduledDelayMs);
      if (this.stopped) return result('cancelled', attempt - 1, lastStatus, lastError);
      if (!hook.is_active || !this.hooks.has(hook.id)) return result('disabled', attempt - 1, lastStatus, lastError);

      const sentAt = this.now();
      const signature = signPayload(hook.secret, Math.floor(sentAt / 1000), body);
      const { status, error } = await this.attempt(hook.url, event, body, signature);
      if (this.stopped && status === null) return result('cancelled', attempt - 1, lastStatus, lastError);
      lastStatus = status;
      lastError = error;
      Object.assign(hook, { last_status: status, last_error: error, last_attempt_at: new Date(sentAt).toISOString() });
      const record = {
        webhookId: hook.id,
        eventId: event.id,
        eventType: event.type,
        attempt,
        duplicate,
        scheduledDelayMs,
        at: new Date(sentAt).toISOString(),
        status,
        signature,
      };
      if (error === null) {
        hook.consecutive_failures = 0;
        hook.attempts.push({ ...record, error: null, outcome: 'success', switchedOff: false });
        return result('delivered', attempt, status, null);
      }
      hook.consecutive_failures += 1;
      const switchedOff = hook.is_active && hook.consecutive_failures >= FAILURE_LIMIT;
      if (switchedOff) hook.is_active = false;
      const retryable = status === null || status === 429 || status >= 500;
      const retry = retryable && hook.is_active && attempt <= this.delays.length;
      hook.attempts.push({ ...record, error, outcome: retry ? 'retry' : 'failed', switchedOff });
      if (!retry) return result('failed', attempt, status, error);
    }
  }

  /** One POST. `error` is null on 2xx. */
  private async attempt(
    url: string,
    event: WebhookEvent,
    body: string,
    signature: string,
  ): Promise<{ status: number | null; error: string | null }> {
    const timeout = AbortSignal.timeout(this.options.timeoutMs ?? DELIVERY_TIMEOUT_MS);
    try {
      const response = await (this.options.fetch ?? fetch)(url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          'User-Agent': USER_AGENT,
          'X-Service-Event': event.type,
          'X-Service-Delivery': event.id,
          'X-Service-Signature': signature,
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([timeout, this.stopController.signal]),
      });
      // The status is all that counts.
      await response.body?.cancel().catch(() => undefined);
      const { status } = response;
      if (status >= 200 && status < 300) return { status, error: null };
      return { status, error: status >= 300 && status < 400 ? 'redirect not followed' : `HTTP ${status}` };
    } catch (error) {
      if (timeout.aborted) return { status: null, error: 'timeout' };
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      return { status: null, error: `${error instanceof Error ? error.message : String(error)}${cause}` };
    }
  }

  private wait(ms: number): Promise<void> {
    return delay(ms, undefined, { ref: false, signal: this.stopController.signal }).catch(() => undefined);
  }
}

/**
 * Each event type the bridge handles, as the simulator sends it: its control route (`POST /_sim/<route>`)
 * and its sender. A new type is a compile error until it has an entry.
 */
export const SIMULATED_EVENTS: {
  readonly [T in HandledEventType]: {
    readonly route: string;
    send(
      sender: WebhookSender,
      projectId: string,
      body: Readonly<Record<string, unknown>>,
      options: SendOptions,
    ): SentEvent & { run?: RunInfo };
  };
} = {
  'run.completed': { route: 'runs', send: (sender, projectId, _body, options) => sender.triggerRun(projectId, options) },
  'draft.ready': {
    route: 'drafts',
    send: (sender, projectId, body, options) =>
      sender.sendDraftReady(projectId, typeof body['asset_id'] === 'string' ? body['asset_id'] : undefined, body['version'], options),
  },
};
