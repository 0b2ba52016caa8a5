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
  count(name: string, value = 1, dimensions?: Record<string, string>): void {
    const key = dimensions
      ? `${name}{${Object.entries(dimensions)
          .map(([k, v]) => `${k}=${v}`)
          .join(',')}}`
      : name;
    this.counts.set(key, (this.counts.get(key) ?? 0) + value);
  }
  countOf(key: string): number {
    return this.counts.get(key) ?? 0;
  }
}
