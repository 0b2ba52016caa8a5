// The completion scripts as a shell runs them: bash sources the script `npx bridge completion bash`
// writes and completes `npx bridge …` as typed; a bare `bridge` only when this package's bin is the
// `bridge` on PATH.
import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bridge-completion-'));

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function script(shell: string, path: string): Promise<string> {
  const io = bufferIo({ env: { PATH: path } });
  expect(await run(['completion', shell], io)).toBe(0);
  return io.stdout.text();
}

/** What bash completes for `line` (the cursor at its end) with the script loaded. */
async function complete(file: string, line: string): Promise<string[]> {
  const words = line.split(' ');
  const program = `source ${JSON.stringify(file)}
COMP_WORDS=(${words.map((word) => JSON.stringify(word)).join(' ')}); COMP_CWORD=${words.length - 1}
spec=$(complete -p ${JSON.stringify(words[0] ?? '')}); fn=\${spec#*-F }; fn=\${fn%% *}
"$fn"; printf '%s\\n' "\${COMPREPLY[@]}"`;
  const { stdout } = await promisify(execFile)('bash', ['--norc', '-c', program], { timeout: 30_000 });
  return stdout.split('\n').filter((word) => word !== '');
}

describe('bash completion, from the cached file', () => {
  const file = join(dir, 'completion.bash');

  it('completes `npx bridge` as typed: commands, subcommands, argument words and flags', async () => {
    writeFileSync(file, await script('bash', ''));
    expect(await complete(file, 'npx br')).toEqual(['bridge']);
    expect(await complete(file, 'npx bridge ')).toEqual(expect.arrayContaining(['dlq', 'trigger', 'doctor', 'completion', 'help']));
    expect(await complete(file, 'npx bridge dlq re')).toEqual(['replay']);
    expect(await complete(file, 'npx bridge completion ')).toEqual(expect.arrayContaining(['bash', 'zsh', 'fish']));
    expect(await complete(file, 'npx bridge dlq replay --dry-run --old')).toEqual(['--older-than']);
    // Another npx package: nothing from the bridge (the shell's default completion applies).
    expect(await complete(file, 'npx cdk de')).toEqual([]);
  });

  it('registers a bare `bridge` only when the bridge on PATH is this package', async () => {
    const ours = join(dir, 'ours');
    const other = join(dir, 'other');
    for (const d of [ours, other]) rmSync(d, { recursive: true, force: true });
    await promisify(execFile)('mkdir', ['-p', ours, other]);
    symlinkSync(join(ROOT, 'cli/bridge.mjs'), join(ours, 'bridge'));
    writeFileSync(join(other, 'bridge'), '#!/bin/sh\n');
    chmodSync(join(other, 'bridge'), 0o755);
    expect(await script('bash', ours)).toContain('complete -F _bridge bridge');
    expect(await script('bash', other)).not.toContain('complete -F _bridge bridge');
    expect(await script('bash', '')).not.toContain('complete -F _bridge bridge');
    expect(await script('zsh', ours)).toContain('compdef _bridge npx bridge');
    expect(await script('fish', ours)).toContain("complete -c bridge -f -a '(__bridge_next)'");
    writeFileSync(file, await script('bash', ours));
    expect(await complete(file, 'bridge dlq st')).toEqual(['stats']);
  });
});

/** Whether `shell` is installed here (zsh and fish are not on every machine: their tests skip without them). */
function installed(shell: string): boolean {
  return spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;
}

describe('zsh and fish completion, from the cached file', () => {
  it.skipIf(!installed('zsh'))('zsh completes `npx bridge …` (compadd and compdef as the completion system runs them)', async () => {
    const file = join(dir, 'completion.zsh');
    writeFileSync(file, await script('zsh', ''));
    const program = `compdef() { print "compdef $*" }
source ${JSON.stringify(file)}
compadd() { [[ $1 == -- ]] && shift; print -r -- "$*" }
_default() { print "(default)" }
words=(npx bridge dlq ""); CURRENT=4; _bridge
words=(npx cdk ""); CURRENT=3; _bridge`;
    const { stdout } = await promisify(execFile)('zsh', ['-f', '-c', program], { timeout: 30_000 });
    expect(stdout.split('\n')).toEqual(['compdef _bridge npx', 'stats peek replay cancel --help', '(default)', '']);
  });

  it.skipIf(!installed('fish'))('fish completes `npx bridge …`', async () => {
    const file = join(dir, 'bridge.fish');
    writeFileSync(file, await script('fish', ''));
    const { stdout } = await promisify(execFile)(
      'fish',
      ['--no-config', '-c', `source ${JSON.stringify(file)}; complete -C'npx bridge dlq re'; complete -C'npx bri'`],
      { timeout: 30_000 },
    );
    expect(stdout.split('\n')).toEqual(['replay', 'bridge\toperate the visibility bridge', '']);
  });
});
