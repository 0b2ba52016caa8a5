/**
 * Typed, strict reads of one stage file's JSON object. Every error names the key and the file, so
 * a bad value fails the synth with a message that says where to fix it; `collect` gathers every
 * key's error, so one synth lists them all.
 */
import { ConfigError } from '../shared/config-env';
import { SECRET_PLACEHOLDER } from '../shared/contracts';

/** Words people leave in a template instead of a value. */
const PLACEHOLDER_WORDS = new Set([SECRET_PLACEHOLDER.toLowerCase(), 'todo', 'tbd', 'changeme', 'change-me', 'change_me', 'xxx']);

/** True for a value copied from a template and never filled in: `<...>`, TODO, or a host under `.invalid`. */
export function isPlaceholder(text: string): boolean {
  const value = text.trim().toLowerCase();
  if (/[<>]/.test(value) || PLACEHOLDER_WORDS.has(value)) return true;
  return /\.invalid(?:[:/]|$)/.test(value);
}

function show(value: unknown): string {
  return JSON.stringify(value) ?? String(value);
}

/** What `collect`ed reads yield: each value, or undefined where its key had an error. */
export type Collected<T> = { [K in keyof T]: T[K] | undefined };

/** Every key of a stage file that can't be used, in one error: one synth lists them all. */
export class StageFileErrors extends ConfigError {
  constructor(
    readonly file: string,
    readonly errors: readonly ConfigError[],
  ) {
    super(
      errors.map((error) => error.variable).join(', '),
      'cannot be used',
      [`${file}: ${errors.length} keys to fix, each in ${file}:`, ...errors.map((error) => `  ${withoutFile(error.message, file)}`)].join(
        '\n',
      ),
    );
  }
}

/** A key's message without the file it names (the list names it once). */
function withoutFile(message: string, file: string): string {
  const prefix = `${file}: `;
  return (message.startsWith(prefix) ? message.slice(prefix.length) : message).replace(/ Fix "[^"]+" in [^ ]+\.$/, '');
}

export class ConfigFields {
  /** The first error of each key, in the order the keys were read. */
  private readonly problems = new Map<string, ConfigError>();

  constructor(
    private readonly values: Readonly<Record<string, unknown>>,
    readonly file: string,
    private readonly defaults: Readonly<Record<string, unknown>>,
  ) {}

  fail(key: string, problem: string): ConfigError {
    return ConfigError.inFile(key, this.file, problem);
  }

  /**
   * One key's read (or a few keys' that belong together): its ConfigError is kept, the first per key,
   * and the read yields undefined. `done` then refuses the whole file, so a partial config never leaves.
   */
  collect<T>(read: () => T): T | undefined {
    try {
      return read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      if (!this.problems.has(error.variable)) this.problems.set(error.variable, error);
      return undefined;
    }
  }

  /** Whether a read of `key` failed already (a check across keys then has nothing sound to compare). */
  failed(key: string): boolean {
    return this.problems.has(key);
  }

  /** The config read with `collect`, once no key had an error; otherwise every key's error at once. */
  done<T>(config: Collected<T>): T {
    const errors = [...this.problems.values()];
    if (errors.length === 1) throw errors[0]!;
    if (errors.length > 1) throw new StageFileErrors(this.file, errors);
    // Every collected read succeeded, so no field is missing.
    return config as T;
  }

  private raw(key: string): unknown {
    return this.values[key] ?? this.defaults[key];
  }

  /** A non-empty string that is not a placeholder. */
  requiredString(key: string): string {
    const value = this.raw(key);
    if (value === undefined) throw this.fail(key, 'is missing');
    const text = this.text(key, value);
    if (text === '') throw this.fail(key, 'must not be empty');
    return text;
  }

  /** Empty or absent means undefined; otherwise must match `pattern`. */
  optionalString(key: string, pattern: RegExp, hint: string): string | undefined {
    const value = this.raw(key);
    if (value === undefined) return undefined;
    const text = this.text(key, value);
    if (text === '') return undefined;
    if (!pattern.test(text)) throw this.fail(key, `${hint}, got ${show(value)}`);
    return text;
  }

  matching(key: string, pattern: RegExp, hint: string): string {
    const text = this.requiredString(key);
    if (!pattern.test(text)) throw this.fail(key, `${hint}, got ${show(text)}`);
    return text;
  }

  integer(key: string, min: number, max: number): number {
    const value = this.raw(key);
    if (typeof value !== 'number' || !Number.isInteger(value)) throw this.fail(key, `must be a whole number, got ${show(value)}`);
    return this.inRange(key, value, min, max);
  }

  number(key: string, min: number, max: number): number {
    const value = this.raw(key);
    if (typeof value !== 'number' || !Number.isFinite(value)) throw this.fail(key, `must be a number, got ${show(value)}`);
    return this.inRange(key, value, min, max);
  }

  boolean(key: string): boolean {
    const value = this.raw(key);
    if (typeof value !== 'boolean') throw this.fail(key, `must be true or false, got ${show(value)}`);
    return value;
  }

  oneOf<T extends string>(key: string, allowed: readonly T[]): T {
    const value = this.raw(key);
    const match = allowed.find((candidate) => candidate === value);
    if (match === undefined) throw this.fail(key, `must be one of ${allowed.map((a) => `"${a}"`).join(', ')}, got ${show(value)}`);
    return match;
  }

  /** A JSON object of non-empty, non-placeholder strings. */
  stringMap(key: string): Record<string, string> {
    const value = this.raw(key);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw this.fail(key, `must be a JSON object such as {"<project id>": "C0123ABCD"}, got ${show(value)}`);
    }
    const out: Record<string, string> = {};
    for (const [entryKey, entryValue] of Object.entries(value as Record<string, unknown>)) {
      if (entryKey.trim() === '' || isPlaceholder(entryKey))
        throw this.fail(key, `has an empty or placeholder project id ${show(entryKey)}`);
      if (typeof entryValue !== 'string' || entryValue.trim() === '' || isPlaceholder(entryValue)) {
        throw this.fail(key, `must map each project id to a channel; "${entryKey}" maps to ${show(entryValue)}`);
      }
      out[entryKey.trim()] = entryValue.trim();
    }
    return out;
  }

  /** The key's value as the file holds it (undefined when absent), for a validator of its own. */
  value(key: string): unknown {
    return this.values[key];
  }

  /** A JSON array of strings each matching `pattern` (trimmed, duplicates dropped); absent means empty. */
  stringList(key: string, pattern: RegExp, hint: string): string[] {
    const value = this.raw(key);
    if (value === undefined) return [];
    if (!Array.isArray(value)) throw this.fail(key, `must be a JSON array such as ${hint}, got ${show(value)}`);
    const out: string[] = [];
    for (const item of value as unknown[]) {
      const text = this.text(key, item);
      if (!pattern.test(text)) throw this.fail(key, `holds ${show(item)}, which is not ${hint}`);
      if (!out.includes(text)) out.push(text);
    }
    return out;
  }

  /** Keys the file holds that the schema does not know (a typo would otherwise be silently ignored). */
  rejectUnknown(known: readonly string[]): void {
    for (const key of Object.keys(this.values).filter((name) => !known.includes(name) && name !== '$comment')) {
      this.problems.set(key, this.fail(key, `is not a known key (known: ${known.join(', ')})`));
    }
  }

  private text(key: string, value: unknown): string {
    if (typeof value !== 'string') throw this.fail(key, `must be a string, got ${show(value)}`);
    if (isPlaceholder(value)) throw this.fail(key, `still holds the placeholder ${show(value)}; put the real value`);
    return value.trim();
  }

  private inRange(key: string, value: number, min: number, max: number): number {
    if (value < min || value > max) throw this.fail(key, `must be between ${min} and ${max}, got ${value}`);
    return value;
  }
}
