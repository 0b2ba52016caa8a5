/**
 * Each helper once: a shared helper's name (every export of shared/util.ts and shared/slack-text.ts, and
 * the named helpers of other modules) is defined in no other file of the repository, so a second
 * `isRecord` or `readBody` fails here instead of drifting.
 * Only top-level definitions count (`function`, `const`/`let`, `class`); a local variable of the same
 * name inside a function is not a helper.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Modules whose every export is a shared helper. */
const HELPER_MODULES = ['shared/util.ts', 'shared/slack-text.ts'];

/** Shared helpers of modules that also hold names protocols reuse (e.g. each local server's own `send`). */
const NAMED_HELPERS: Record<string, string> = {
  ConfigError: 'shared/config-env.ts',
  readBody: 'local/http.ts',
  listen: 'local/http.ts',
  closeServer: 'local/http.ts',
  urlHost: 'local/http.ts',
  sendJson: 'local/http.ts',
  BodyTooLargeError: 'local/http.ts',
};

const SKIPPED_DIRS = new Set(['node_modules', 'cdk.out', '.git', 'coverage', 'reports']);

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return SKIPPED_DIRS.has(entry.name) || entry.name.startsWith('.') ? [] : sourceFiles(join(dir, entry.name));
    return /\.(ts|mts|js|mjs)$/.test(entry.name) ? [relative(ROOT, join(dir, entry.name))] : [];
  });
}

/** Top-level definitions of a file: `[export] [async] function NAME`, `[export] const|let NAME =`, `[export] [abstract] class NAME`. */
function topLevelDefinitions(text: string): string[] {
  const pattern =
    /^(?:export\s+)?(?:(?:async\s+)?function\*?\s+([A-Za-z_$][\w$]*)|(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*[:=]|(?:abstract\s+)?class\s+([A-Za-z_$][\w$]*))/gm;
  return [...text.matchAll(pattern)].map((m) => (m[1] ?? m[2] ?? m[3])!);
}

/** The names each helper module exports (its top-level definitions marked `export`). */
function exportedNames(text: string): string[] {
  return topLevelDefinitions(text.replace(/^(?!export\s).*$/gm, ''));
}

describe('each helper once', () => {
  it('reads definitions as the check needs them', () => {
    const text = [
      'export function isRecord(value: unknown) {}',
      'export async function readBody() {}',
      'const sleep = (ms: number) => ms;',
      'export class ConfigError extends Error {}',
      'function outer() {',
      '  const isRecord = 1;',
      '}',
    ].join('\n');
    expect(topLevelDefinitions(text)).toEqual(['isRecord', 'readBody', 'sleep', 'ConfigError', 'outer']);
    expect(exportedNames(text)).toEqual(['isRecord', 'readBody', 'ConfigError']);
  });

  it('finds no second definition of a shared helper name', () => {
    const owners = new Map<string, string>();
    for (const module of HELPER_MODULES) {
      for (const name of exportedNames(readFileSync(join(ROOT, module), 'utf8'))) owners.set(name, module);
    }
    for (const [name, module] of Object.entries(NAMED_HELPERS)) {
      expect(exportedNames(readFileSync(join(ROOT, module), 'utf8')), `${module} exports ${name}`).toContain(name);
      owners.set(name, module);
    }
    const duplicates: string[] = [];
    for (const file of sourceFiles(ROOT)) {
      for (const name of topLevelDefinitions(readFileSync(join(ROOT, file), 'utf8'))) {
        const owner = owners.get(name);
        if (owner !== undefined && owner !== file) duplicates.push(`${name}: defined in ${file}, import it from ${owner}`);
      }
    }
    expect(duplicates).toEqual([]);
  });
});
