/** Small helpers used across the code base; one home so they are not written again. */

/** A plain object (not null, not an array): what JSON.parse gives for `{...}` (`T`: its values' type, e.g. Json). */
export function isRecord<T = unknown>(value: unknown): value is Record<string, T> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** `value` when it is a plain object, else an empty one: for reading optional fields of parsed JSON. */
export function asRecord(value: unknown): Record<string, unknown> {
  return isRecord(value) ? value : {};
}

/** `value` when it is an array, else an empty one. */
export function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Resolves after `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** The JSON a string holds; undefined for anything else (not a string, or not JSON): the caller checks the shape. */
export function parseJsonOrUndefined(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
