/** Small helpers used across the code base; one home so they are not written again. */

/** A plain object (not null, not an array): what JSON.parse gives for `{...}` (`T`: its values' type, e.g. Json). */
export function isRecord<T = unknown>(value: unknown): value is Record<string, T> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
