/**
 * Logging and metrics ports. Lambda uses Powertools (structured JSON logs, CloudWatch EMF metrics);
 * tests and the local stack pass recorders or quieter sinks through the same interfaces.
 */

export type LogFields = Record<string, unknown>;

export interface Log {
  debug(message: string, fields?: LogFields): void;
  info(message: string, fields?: LogFields): void;
  warn(message: string, fields?: LogFields): void;
  error(message: string, fields?: LogFields): void;
}

export interface Metrics {
  /** Adds 1 (or `value`) to a count metric; `dimensions` adds a breakdown such as the rejection reason. */
  count(name: string, value?: number, dimensions?: Record<string, string>): void;
}

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
export const noMetrics: Metrics = { count() {} };

/** Keeps what was logged and counted, for tests and the local runner. */
export class RecordingObserver implements Log, Metrics {
  readonly entries: { level: string; message: string; fields: LogFields }[] = [];
  readonly counts = new Map<string, number>();

  debug(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'debug', message, fields });
  }
  info(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'info', message, fields });
  }
  warn(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'warn', message, fields });
  }
  error(message: string, fields: LogFields = {}): void {
    this.entries.push({ level: 'error', message, fields });
  }
  count(name: string, value = 1, dimensions?: Record<string, string>): void {
    const key = dimensions ? `${name}{${Object.entries(dimensions).map(([k, v]) => `${k}=${v}`).join(',')}}` : name;
    this.counts.set(key, (this.counts.get(key) ?? 0) + value);
  }
  countOf(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}

/** Error details safe to log: name and message, never the request or credentials an SDK error may carry. */
export function describeError(error: unknown): { errorName: string; errorMessage: string } {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message };
  return { errorName: typeof error, errorMessage: String(error) };
}
