/**
 * Helpers around the Log and Metrics ports (./ports): sinks that drop everything, and error details
 * safe to log. Lambda uses the Powertools adapter; tests use test/support/recording-observer.
 */
import type { Log, Metrics } from './ports';

export const silentLog: Log = { debug() {}, info() {}, warn() {}, error() {} };
export const noMetrics: Metrics = { count() {} };

/** Error details safe to log: name and message, never the request or credentials an SDK error may carry. */
export function describeError(error: unknown): { errorName: string; errorMessage: string } {
  if (error instanceof Error) return { errorName: error.name, errorMessage: error.message };
  return { errorName: typeof error, errorMessage: String(error) };
}
