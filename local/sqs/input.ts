// Typed reads of a JSON request body; a wrong type is the caller's error, reported as SQS does.
import { isRecord } from '../../shared/util';
import { invalidParameter, missingParameter } from './errors';

export type JsonObject = Record<string, unknown>;

/** `input[key]` when `ok` says it is the right type; absent (undefined or null) is undefined. */
function opt<T>(input: JsonObject, key: string, ok: (value: unknown) => value is T, reason: string): T | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (!ok(value)) throw invalidParameter(key, value, reason);
  return value;
}

const isString = (value: unknown): value is string => typeof value === 'string';

export function optString(input: JsonObject, key: string): string | undefined {
  return opt(input, key, isString, 'Must be a string.');
}

/** Absent and empty both count as missing, as SQS treats an empty required string. */
export function reqString(input: JsonObject, key: string): string {
  const value = optString(input, key);
  if (value === undefined || value === '') throw missingParameter(key);
  return value;
}

/** Integers arrive as JSON numbers; numeric strings are accepted too, as the query protocol sends them. */
export function optInt(input: JsonObject, key: string, min: number, max: number): number | undefined {
  const raw = input[key];
  if (raw === undefined || raw === null) return undefined;
  const value = typeof raw === 'string' && /^-?\d+$/.test(raw) ? Number(raw) : raw;
  if (typeof value !== 'number' || !Number.isInteger(value)) throw invalidParameter(key, raw, 'Must be an integer.');
  if (value < min || value > max) throw invalidParameter(key, raw, `Must be between ${min} and ${max}, if provided.`);
  return value;
}

export function optStringArray(input: JsonObject, key: string): string[] | undefined {
  return opt(input, key, (value): value is string[] => Array.isArray(value) && value.every(isString), 'Must be a list of strings.');
}

export function optStringMap(input: JsonObject, key: string): Map<string, string> | undefined {
  const value = opt(input, key, isRecord, 'Must be a map of strings.');
  if (value === undefined) return undefined;
  for (const [name, item] of Object.entries(value))
    if (!isString(item)) throw invalidParameter(`${key}.${name}`, item, 'Must be a string.');
  return new Map(Object.entries(value) as [string, string][]);
}

export function optObject(input: JsonObject, key: string): JsonObject | undefined {
  return opt(input, key, isRecord, 'Must be an object.');
}

export function optObjectArray(input: JsonObject, key: string): JsonObject[] | undefined {
  return opt(input, key, (value): value is JsonObject[] => Array.isArray(value) && value.every(isRecord), 'Must be a list of objects.');
}
