// Typed reads of a JSON request body; a wrong type is the caller's error, reported as SQS does.
import { isRecord } from '../../shared/util';
import { invalidParameter, missingParameter } from './errors';

export type JsonObject = Record<string, unknown>;

export function optString(input: JsonObject, key: string): string | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw invalidParameter(key, value, 'Must be a string.');
  return value;
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
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw invalidParameter(key, value, 'Must be a list of strings.');
  }
  return value;
}

export function optStringMap(input: JsonObject, key: string): Map<string, string> | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidParameter(key, value, 'Must be a map of strings.');
  const out = new Map<string, string>();
  for (const [name, item] of Object.entries(value)) {
    if (typeof item !== 'string') throw invalidParameter(`${key}.${name}`, item, 'Must be a string.');
    out.set(name, item);
  }
  return out;
}

export function optObject(input: JsonObject, key: string): JsonObject | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) throw invalidParameter(key, value, 'Must be an object.');
  return value;
}

export function optObjectArray(input: JsonObject, key: string): JsonObject[] | undefined {
  const value = input[key];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every(isRecord)) throw invalidParameter(key, value, 'Must be a list of objects.');
  return value;
}
