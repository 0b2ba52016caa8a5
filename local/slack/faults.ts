/** Faults injected into the local Slack server's Web API, per method and channel (tests, `bridge slack outage`). */
import { fail, rateLimited, type SlackAnswer } from './web-api';

/** Path of the fault control endpoint (local testing: `bridge slack outage on|off`). */
export const FAULTS_PATH = '/_faults';

export type FaultKind =
  /** HTTP 429 with a `Retry-After` header and `{ ok: false, error: 'ratelimited' }`. */
  | 'ratelimited'
  /** HTTP 500 with a non-JSON body. */
  | 'server_error'
  /** HTTP 200 `{ ok: false, error: <error> }`, e.g. `channel_not_found`. */
  | 'slack_error'
  /** Waits `latencyMs` (default 1000) and then answers normally: for client timeout tests. */
  | 'delay';

export interface FaultSpec {
  /** Only calls of this method (e.g. `chat.postMessage`); any method when omitted. */
  method?: string;
  /** Only calls for this channel (a leading `#` is ignored); any channel when omitted. */
  channel?: string;
  /** How many matching calls the fault hits; until `clearFaults()` when omitted. */
  times?: number;
  kind: FaultKind;
  /** The error code for `slack_error` (default `internal_error`). */
  error?: string;
  /** The `Retry-After` seconds for `ratelimited` (default 1). */
  retryAfterSeconds?: number;
  /** Extra latency before this faulty answer (and the whole wait for `delay`). */
  latencyMs?: number;
}

interface ActiveFault {
  spec: FaultSpec;
  remaining: number;
}

export class SlackFaults {
  private faults: ActiveFault[] = [];

  /** `channelId` resolves `#name` as the workspace does, so a fault on a name hits calls by id. */
  constructor(private readonly channelId: (channel: string) => string) {}

  inject(spec: FaultSpec): void {
    this.faults.push({ spec: { ...spec }, remaining: spec.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.faults = [];
  }

  /** The first fault that hits a call of `method` for `channel`, counted as used. */
  take(method: string, channel: string | undefined): FaultSpec | undefined {
    const normalized = channel === undefined ? undefined : this.channelId(channel);
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.spec.method !== undefined && fault.spec.method !== method) continue;
      if (fault.spec.channel !== undefined && this.channelId(fault.spec.channel) !== normalized) continue;
      fault.remaining -= 1;
      this.faults = this.faults.filter((f) => f.remaining > 0);
      return fault.spec;
    }
    return undefined;
  }

  /**
   * `POST /_faults {kind, method?, channel?, times?, error?}` makes Slack fail from outside the process
   * (`bridge slack outage on`); `DELETE /_faults` heals it. Local testing only, like the rest of this server.
   */
  control(method: string, raw: string): SlackAnswer {
    if (method === 'DELETE') {
      this.clear();
      return { status: 200, body: { ok: true } };
    }
    let spec: unknown;
    try {
      spec = JSON.parse(raw);
    } catch {
      spec = undefined;
    }
    const kind = (spec as { kind?: unknown } | undefined)?.kind;
    if (method !== 'POST' || (kind !== 'ratelimited' && kind !== 'server_error' && kind !== 'slack_error' && kind !== 'delay')) {
      return { status: 400, body: { ok: false, error: 'POST a JSON fault such as {"kind":"server_error"}, or DELETE to clear' } };
    }
    this.inject(spec as FaultSpec);
    return { status: 200, body: { ok: true } };
  }
}

/** The answer a fault gives instead of the method's; undefined for `delay` (the call then answers normally). */
export function faultAnswer(fault: FaultSpec): SlackAnswer | undefined {
  switch (fault.kind) {
    case 'ratelimited':
      return rateLimited(fault.retryAfterSeconds ?? 1);
    case 'server_error':
      return { status: 500, body: 'Internal Server Error' };
    case 'slack_error':
      return fail(fault.error ?? 'internal_error');
    case 'delay':
      return undefined;
  }
}
