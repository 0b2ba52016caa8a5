/** Faults injected into the local Slack server's Web API, per method and channel (tests, `bridge slack outage`). */
import { NATIVE_BLOCK_TYPES, type NativeBlockType } from '../../shared/slack-blocks/limits';
import { isRecord, parseJsonOrUndefined } from '../../shared/util';
import { fail, invalidBlocks, rateLimited, type SlackAnswer } from './protocol';

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
  | 'delay'
  /**
   * HTTP 200 `invalid_blocks` for a call that carries a chart or data table block, as in a workspace the
   * blocks' rollout has not reached; calls without them are not hit (nor counted in `times`).
   */
  | 'refuse_native_blocks';

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

/** What a fault is matched against: the call's method, channel and blocks (`blocks`, or a view's). */
export interface FaultTarget {
  method: string;
  channel: string | undefined;
  blocks: readonly unknown[];
}

export class SlackFaults {
  private faults: ActiveFault[] = [];

  /**
   * `channelId` resolves `#name` as the workspace does, so a fault on a name hits calls by id. With
   * `refuseNativeBlocks` every chart and table block is refused until the server stops, whatever `clear()` does.
   */
  constructor(
    private readonly channelId: (channel: string) => string,
    private readonly refuseNativeBlocks = false,
  ) {}

  inject(spec: FaultSpec): void {
    this.faults.push({ spec: { ...spec }, remaining: spec.times ?? Number.POSITIVE_INFINITY });
  }

  clear(): void {
    this.faults = [];
  }

  /** The first fault that hits the call, counted as used. */
  take({ method, channel, blocks }: FaultTarget): FaultSpec | undefined {
    const native = nativeBlocksIn(blocks).length > 0;
    if (native && this.refuseNativeBlocks) return { kind: 'refuse_native_blocks' };
    const normalized = channel === undefined ? undefined : this.channelId(channel);
    for (const fault of this.faults) {
      if (fault.remaining <= 0) continue;
      if (fault.spec.kind === 'refuse_native_blocks' && !native) continue;
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
   * (`bridge slack outage on`; `{"kind":"refuse_native_blocks"}` refuses charts and tables); `DELETE /_faults`
   * heals it. Local testing only, like the rest of this server.
   */
  control(method: string, raw: string): SlackAnswer {
    if (method === 'DELETE') {
      this.clear();
      return { status: 200, body: { ok: true } };
    }
    const spec = parseJsonOrUndefined(raw);
    const kind = isRecord(spec) ? spec.kind : undefined;
    if (method !== 'POST' || typeof kind !== 'string' || !Object.hasOwn(FAULT_ANSWERS, kind)) {
      return { status: 400, body: { ok: false, error: 'POST a JSON fault such as {"kind":"server_error"}, or DELETE to clear' } };
    }
    this.inject(spec as FaultSpec);
    return { status: 200, body: { ok: true } };
  }
}

/** Each kind's answer instead of the method's (to a call carrying `blocks`); undefined for `delay` (the call then answers normally). */
const FAULT_ANSWERS: { readonly [K in FaultKind]: (fault: FaultSpec, blocks: readonly unknown[]) => SlackAnswer | undefined } = {
  ratelimited: (fault) => rateLimited(fault.retryAfterSeconds ?? 1),
  server_error: () => ({ status: 500, body: 'Internal Server Error' }),
  slack_error: (fault) => fail(fault.error ?? 'internal_error'),
  delay: () => undefined,
  refuse_native_blocks: (_fault, blocks) =>
    invalidBlocks(nativeBlocksIn(blocks).map(({ type, index }) => `unsupported block type ${type} at blocks[${index}]`)),
};

export function faultAnswer(fault: FaultSpec, blocks: readonly unknown[]): SlackAnswer | undefined {
  return FAULT_ANSWERS[fault.kind](fault, blocks);
}

/** The chart and table blocks among `blocks`: their type and where they are. */
function nativeBlocksIn(blocks: readonly unknown[]): { type: NativeBlockType; index: number }[] {
  const isNative = (type: unknown): type is NativeBlockType => (NATIVE_BLOCK_TYPES as readonly unknown[]).includes(type);
  return blocks.flatMap((block, index) => (isRecord(block) && isNative(block.type) ? [{ type: block.type, index }] : []));
}
