/** A Log and Metrics double that keeps what was logged and counted, for assertions. */
import type { Log, LogFields, Metrics } from '../../shared/ports';

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
  /** As the Powertools adapter emits it: the total under `name`, each breakdown dimension under `name{key=value}`. */
  count(name: string, value = 1, dimensions: Record<string, string> = {}): void {
    for (const key of [name, ...Object.entries(dimensions).map(([k, v]) => `${name}{${k}=${v}}`)])
      this.counts.set(key, (this.counts.get(key) ?? 0) + value);
  }
  countOf(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
