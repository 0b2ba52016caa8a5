/**
 * Observability for the local stack: the handlers' `Observability` port without Powertools' JSON on
 * stdout. Warnings and errors become one readable line each (stderr by default); info and debug
 * only show at a lower level (`npm start -- --verbose`). Every line and every metric is also kept,
 * so tests and the load test can ask what happened (`entries`, `countOf`).
 *
 * One hub per stack; each handler "container" gets its own `Observability` from `forService`, so
 * the keys one invocation appends never leak into another's lines.
 */
import type { Observability } from '../shared/adapters/powertools';
import type { LogFields } from '../shared/ports';
import { asRecord, parseJsonOrUndefined } from '../shared/util';
import type { DeadLettered } from './sqs/engine';

/**
 * What a log line tells the person running the bridge, beyond its level: the story `npm start`'s
 * terminal and `npx bridge tail` tell one line per step (warnings and errors are failures anyway).
 */
export type StoryKind = 'delivery' | 'digest' | 'skip' | 'dlq';

/** The local SQS moved a message to a dead-letter queue (AWS logs nothing then; its last attempt said so). */
export const DEAD_LETTER_MESSAGE = 'message moved to the DLQ';

/**
 * The messages of the story, by the exact text the functions log (a reworded line drops out of the
 * story: test/e2e/cli-local.test.ts follows a delivery, a digest, a mute and a DLQ arrival through it).
 */
export const STORY_MESSAGES: Readonly<Record<string, StoryKind>> = {
  'delivery accepted': 'delivery',
  'delivery rejected': 'delivery',
  'duplicate delivery acknowledged': 'delivery',
  'signed event of an unhandled type acknowledged': 'delivery',
  'digest posted': 'digest',
  'draft notice posted': 'digest',
  'run superseded: a newer run of the project was already taken up': 'skip',
  'not posted to a channel that muted the project': 'skip',
  'digest posted nowhere: every channel of the project muted it or refuses posts': 'skip',
  'not posted to a channel Slack refused; it waits to be subscribed again': 'skip',
  'replayed delivery ignored': 'skip',
  'event already handled; nothing posted': 'skip',
  [DEAD_LETTER_MESSAGE]: 'dlq',
};

export function storyKindOf(message: string): StoryKind | undefined {
  return Object.hasOwn(STORY_MESSAGES, message) ? STORY_MESSAGES[message] : undefined;
}

/** Skips are info lines: shown at the default (warn) level all the same, one line each. */
export const SKIP_MESSAGES: readonly string[] = Object.keys(STORY_MESSAGES).filter((m) => STORY_MESSAGES[m] === 'skip');

export type LocalLogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

export interface LocalLogEntry {
  /** Epoch ms. */
  at: number;
  service: string;
  level: Exclude<LocalLogLevel, 'silent'>;
  message: string;
  fields: LogFields;
}

export interface LocalObservabilityOptions {
  /** Lowest level written out (default `warn`); `silent` writes nothing. Everything is kept regardless. */
  level?: LocalLogLevel;
  /** Where lines go (default: stderr). */
  write?: (line: string) => void;
  /** Info messages shown even below `info` (e.g. "digest posted" when the digests go to a real Slack). */
  highlight?: readonly string[];
}

const ORDER: Record<LocalLogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };
const MAX_VALUE_CHARS = 300;
/** Entries kept for `entries()` (the oldest dropped first). */
const KEPT_ENTRIES = 5000;

export class LocalObservabilityHub {
  private readonly kept: LocalLogEntry[] = [];
  private readonly counts = new Map<string, number>();
  private readonly threshold: number;
  private readonly write: (line: string) => void;
  private readonly highlight: ReadonlySet<string>;
  private readonly listeners = new Set<(entry: LocalLogEntry) => void>();

  constructor(options: LocalObservabilityOptions = {}) {
    this.threshold = ORDER[options.level ?? 'warn'];
    this.write = options.write ?? ((line) => process.stderr.write(`${line}\n`));
    this.highlight = new Set(options.highlight ?? []);
  }

  /** A fresh `Observability` for one handler instance ("container") of `service`. */
  forService(service: string): Observability {
    const keys: LogFields = {};
    const log =
      (level: LocalLogEntry['level']) =>
      (message: string, fields: LogFields = {}) => {
        this.record({ at: Date.now(), service, level, message, fields: { ...keys, ...fields } });
      };
    return {
      log: { debug: log('debug'), info: log('info'), warn: log('warn'), error: log('error') },
      metrics: {
        count: (name, value = 1, dimensions) => {
          this.add(`${service}:${name}`, value);
          // As the Powertools adapter emits them: each breakdown dimension a record of its own.
          for (const [key, dim] of Object.entries(dimensions ?? {})) this.add(`${service}:${name}{${key}=${dim}}`, value);
        },
      },
      flush: () => undefined,
      appendKeys: (fields) => Object.assign(keys, fields),
      resetKeys: () => {
        for (const key of Object.keys(keys)) delete keys[key];
      },
    };
  }

  /** A log line from the local stack itself (poller, gateway), same format as the handlers'. */
  log(service: string, level: LocalLogEntry['level'], message: string, fields: LogFields = {}): void {
    this.record({ at: Date.now(), service, level, message, fields });
  }

  /** Calls `listener` with every entry from now on, whatever the level, until the returned function is called. */
  subscribe(listener: (entry: LocalLogEntry) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Entries kept so far, oldest first (copies), optionally of one service and/or level and above. */
  entries(filter: { service?: string; level?: LocalLogEntry['level'] } = {}): LocalLogEntry[] {
    const min = filter.level === undefined ? 0 : ORDER[filter.level];
    return this.kept
      .filter((e) => (filter.service === undefined || e.service === filter.service) && ORDER[e.level] >= min)
      .map((e) => ({ ...e, fields: { ...e.fields } }));
  }

  /**
   * A metric's total: `countOf('DigestPosted')` sums every service, `countOf('digest:DigestPosted')`
   * one service; a dimension breakdown reads `countOf('ingest:DeliveryRejected{reason=signature_too_old}')`.
   */
  countOf(name: string): number {
    if (name.includes(':')) return this.counts.get(name) ?? 0;
    let total = 0;
    for (const [key, value] of this.counts) if (key.slice(key.indexOf(':') + 1) === name) total += value;
    return total;
  }

  private add(key: string, value: number): void {
    this.counts.set(key, (this.counts.get(key) ?? 0) + value);
  }

  private record(entry: LocalLogEntry): void {
    for (const listener of this.listeners) {
      try {
        listener(entry);
      } catch {
        // A slow or broken subscriber must not break a handler.
      }
    }
    this.kept.push(entry);
    if (this.kept.length > KEPT_ENTRIES) this.kept.splice(0, this.kept.length - KEPT_ENTRIES);
    const shown =
      ORDER[entry.level] >= this.threshold ||
      (this.threshold < ORDER.silent && entry.level === 'info' && this.highlight.has(entry.message));
    if (!shown) return;
    try {
      this.write(formatLogLine(entry));
    } catch {
      // A closed terminal must not break a handler.
    }
  }
}

/** `12:03:04 digest  WARN  message  key=value key2="with spaces"` — one line, whatever the fields hold. */
export function formatLogLine(entry: LocalLogEntry): string {
  const time = new Date(entry.at).toISOString().slice(11, 19);
  const fields = Object.entries(entry.fields)
    .filter(([, value]) => value !== undefined)
    .map(([key, value]) => `${key}=${formatValue(value)}`)
    .join(' ');
  const level = entry.level.toUpperCase().padEnd(5);
  return `${time} ${entry.service.padEnd(6)} ${level} ${oneLine(entry.message)}${fields ? `  ${fields}` : ''}`;
}

function formatValue(value: unknown): string {
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' || typeof value === 'boolean' || value === null) text = String(value);
  else if (value instanceof Error) text = `${value.name}: ${value.message}`;
  else {
    try {
      text = JSON.stringify(value) ?? typeof value;
    } catch {
      text = Object.prototype.toString.call(value);
    }
  }
  text = oneLine(text);
  if (text.length > MAX_VALUE_CHARS) text = `${text.slice(0, MAX_VALUE_CHARS)}…`;
  return text === '' || /[\s"=]/.test(text) ? JSON.stringify(text) : text;
}

function oneLine(text: string): string {
  return text.replace(/\s*[\r\n]+\s*/g, ' ').trim();
}

/** Logs a dead-letter arrival of the local SQS as one warning, with the event it carried when it is one. */
export function logDeadLetter(hub: LocalObservabilityHub, moved: DeadLettered): void {
  hub.log('sqs', 'warn', DEAD_LETTER_MESSAGE, {
    queue: moved.source,
    dlq: moved.target,
    ...carriedEvent(moved.body),
    messageId: moved.messageId,
    receiveCount: moved.receiveCount,
    next: 'npx bridge dlq peek',
  });
}

/** The event id and type of a queued webhook event (`{event: {id, type}}`), or the kind of another message. */
function carriedEvent(body: string): LogFields {
  const parsed = asRecord(parseJsonOrUndefined(body));
  const event = asRecord(parsed.event);
  if (typeof event.id === 'string') return { eventId: event.id, type: event.type };
  return typeof parsed.kind === 'string' ? { type: parsed.kind } : {};
}
