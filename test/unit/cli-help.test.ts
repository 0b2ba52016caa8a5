// The CLI's help and shell completion come from its one command tree: every command is in the main
// help and the completion script, every option in its command's completion, and every flag a help
// text names is one the command takes.
import { describe, expect, it } from 'vitest';
import type { Command } from 'commander';
import { didYouMean } from '../../cli/args';
import type { BridgeCommand } from '../../cli/bridge-command';
import { commandPath } from '../../cli/bridge-command';
import { bufferIo } from '../../cli/io';
import { Program } from '../../cli/program';
import { COMMANDS, FOOTER, TITLE } from '../../cli/tree';

const program = new Program({ title: TITLE, footer: FOOTER, version: '0.0.0' }, COMMANDS);
/** The commands that run, as the program built them. */
function leavesBeneath(cmd: BridgeCommand): BridgeCommand[] {
  return cmd.commands.length === 0 ? [cmd] : cmd.commands.flatMap((child) => leavesBeneath(child as BridgeCommand));
}
const leaves = leavesBeneath(program.root);

function longFlags(cmd: Command): string[] {
  return cmd.options.flatMap((option) => (option.long === undefined ? [] : [option.long]));
}

function flagsNamedIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w-])--[a-z][\w-]*/g)].map((match) => match[0]);
}

async function output(argv: string[]): Promise<string> {
  const { run } = await import('../../cli/main');
  const io = bufferIo();
  expect(await run(argv, io)).toBe(0);
  return io.stdout.text();
}

describe('help and completion from the command tree', () => {
  it('a flag named in a command help is one the command takes', () => {
    for (const leaf of leaves) {
      const text = [leaf.usage(), leaf.description(), leaf.note ?? '', ...leaf.options.map((option) => option.description)].join('\n');
      const own = new Set([...longFlags(leaf), '--help']);
      expect(
        flagsNamedIn(text).filter((flag) => !own.has(flag)),
        commandPath(leaf),
      ).toEqual([]);
    }
  });

  it('a flag named in the prose of a group is one that a command beneath it takes', () => {
    const groups = (cmd: BridgeCommand): BridgeCommand[] =>
      cmd.commands.length === 0 ? [] : [cmd, ...cmd.commands.flatMap((child) => groups(child as BridgeCommand))];
    for (const group of groups(program.root)) {
      const taken = new Set([...leavesBeneath(group).flatMap(longFlags), '--help']);
      const named = flagsNamedIn(`${group.sharedNote ?? ''}\n${group.note ?? ''}`);
      expect(
        named.filter((flag) => !taken.has(flag)),
        commandPath(group),
      ).toEqual([]);
    }
  });

  it('the main help lists every command, and the flags it names exist', async () => {
    const help = await output(['--help']);
    for (const leaf of leaves) expect(help).toContain(leaf.name());
    const all = new Set([...leaves.flatMap(longFlags), '--help', '--version']);
    expect(flagsNamedIn(help).filter((flag) => !all.has(flag))).toEqual([]);
  });

  it('completion offers every command, sub-command, argument word and option', async () => {
    const script = await output(['completion', 'bash']);
    for (const leaf of leaves) {
      const path = commandPath(leaf);
      const line = script.split('\n').find((text) => text.trim().startsWith(`"${path}")`));
      expect(line, path).toBeDefined();
      for (const word of [...(leaf.registeredArguments[0]?.argChoices ?? []), ...longFlags(leaf)]) expect(line, path).toContain(word);
    }
    expect(script).toContain('"secrets signing") opts="add remove list');
    expect(script).toContain(
      '"") opts="dlq trigger send tail doctor smoke secrets slack subscriptions connections completion help --version --help"',
    );
  });

  it('help <command> prints the same text as <command> --help', async () => {
    expect(await output(['help', 'secrets', 'signing', 'remove'])).toBe(await output(['secrets', 'signing', 'remove', '--help']));
    expect(await output(['help', 'dlq'])).toBe(await output(['dlq', '--help']));
  });
});

describe('did you mean', () => {
  it.each([
    ['dlqq', ['dlq', 'send', 'smoke'], ' (did you mean dlq?)'],
    ['--maxx', ['--max', '--json'], ' (did you mean --max?)'],
    ['--x', ['--max', '--json'], ''],
    ['run.complete', ['run.completed', 'draft.ready'], ' (did you mean run.completed?)'],
    ['nope', ['run.completed', 'draft.ready'], ''],
    ['sat', ['set', 'sit'], ' (did you mean one of set, sit?)'],
  ])('%s among %j', (word, candidates, expected) => {
    expect(didYouMean(word, candidates)).toBe(expected);
  });
});
