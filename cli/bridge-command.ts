/**
 * commander's Command as the CLI uses it: its parse errors are UsageErrors (exit 2) whose message
 * names the fix, and it carries the help prose that is not an option or a command.
 */
import { Command, type Option } from 'commander';
import { didYouMean } from './args';
import { UsageError } from './errors';

export class BridgeCommand extends Command {
  /** Prose after this command's options. */
  note: string | undefined;
  /** Prose for this command and every command beneath it. */
  sharedNote: string | undefined;

  override createCommand(name?: string): BridgeCommand {
    return new BridgeCommand(name);
  }

  // commander reports an unknown option and a missing option value through these two methods, with
  // the flag and the option as values: the message is built from them, not from commander's text.

  unknownOption(flag: string): never {
    if (this.commands.length > 0) throw misuse(this, this.args[0] ?? flag);
    throw new UsageError(`unknown option ${flag}${didYouMean(flag, [...longFlags(this), '--help'])}`, commandPath(this));
  }

  optionMissingArgument(option: Option): never {
    throw new UsageError(`${option.long ?? option.flags} needs a value`, commandPath(this));
  }
}

/** A group (or the program) given no command, an unknown one, or an option before its command. */
export function misuse(cmd: Command, word: string | undefined): UsageError {
  const names = cmd.commands.map((child) => child.name());
  const path = commandPath(cmd);
  if (path === '')
    return new UsageError(
      word?.startsWith('-') === true
        ? `unknown option ${word}${didYouMean(word, [...longFlags(cmd), '--help'])}`
        : `unknown command "${word ?? ''}"${didYouMean(word ?? '', names)}`,
    );
  if (word === undefined) return new UsageError(`${path} needs a subcommand: ${names.join(', ')}`, path);
  if (word.startsWith('-')) return new UsageError(`unknown ${path} option ${word}; give a subcommand first (${names.join(', ')})`, path);
  return new UsageError(`unknown ${path} subcommand "${word}"${didYouMean(word, names)}`, path);
}

function longFlags(cmd: Command): string[] {
  return cmd.options.flatMap((option) => (option.long === undefined ? [] : [option.long]));
}

/** The words after `bridge` ('dlq replay'), as usage errors name the command. */
export function commandPath(cmd: Command): string {
  const names: string[] = [];
  for (let at = cmd; at.parent !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** `npx bridge dlq replay`: copy-pasteable (on Linux a bare `bridge` is iproute2's tool). */
export function commandWords(cmd: Command): string {
  return ['npx', ...ancestry(cmd).map((at) => at.name())].join(' ');
}

/** The program first, `cmd` last. */
export function ancestry(cmd: Command): Command[] {
  return cmd.parent === null ? [cmd] : [...ancestry(cmd.parent), cmd];
}

export function isLeaf(cmd: Command): boolean {
  return cmd.commands.length === 0;
}

export function leavesBeneath(cmd: Command): Command[] {
  return isLeaf(cmd) ? [cmd] : cmd.commands.flatMap(leavesBeneath);
}
