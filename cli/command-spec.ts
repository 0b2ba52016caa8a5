/**
 * The shape of the CLI's one command tree (cli/tree.ts): each command is declared once, with its
 * arguments, options, help and handler. The commander program, the help and the shell completion are
 * all built from it, so a command or option exists in every one of them or in none.
 */
import type { Command } from 'commander';
import type { CliIo } from './io';
import type { CommandResult } from './result';

type Value = string | boolean | string[] | undefined;

/** A command line as its handler sees it: option values by long name, and the positional words. */
export interface Parsed {
  /** The command's words, e.g. 'dlq replay' (for messages and `--help` pointers). */
  command: string;
  values: Record<string, Value>;
  positionals: string[];
  /** The command in the program (help and completion read the tree from it). */
  node: Command;
}

export interface OptionDef {
  /** The value's name in help (`--max <N>`); none for a flag. */
  value?: string;
  /** The value may be left out (`--duplicate [N]`); then it is this. */
  preset?: string;
  /** May repeat; the values are collected in order. */
  multiple?: true;
  short?: string;
  help: string;
  /** The help heading it is listed under (default "Options:"). */
  group?: string;
  /** Taken by many commands alike: listed once, in `npx bridge help environment`, not in each command's help. */
  listedOnce?: true;
}

export type OptionDefs = Readonly<Record<string, OptionDef>>;

export interface ArgumentDef {
  name: string;
  /**
   * The words it takes, for help and completion. The handler checks them itself, so its message can
   * name the fix (and suggest the nearest).
   */
  choices?: readonly string[];
  /** Takes every remaining word. */
  variadic?: true;
}

export type Handler = (parsed: Parsed, io: CliIo) => Promise<CommandResult>;

/** A command that runs. */
export interface LeafDef {
  /** One line, in the help of the command above. */
  summary: string;
  /** What follows the command words in its usage line, when the generated one says too little. */
  synopsis?: string;
  /** The help's prose, between the usage line and the options. */
  description?: string;
  args?: readonly ArgumentDef[];
  options: OptionDefs;
  run: Handler;
}

/** A command that only groups others (`dlq`, `secrets signing`). */
export interface GroupDef {
  summary: string;
  /** Prose shown in this command's help and in the help of every command beneath it. */
  shared?: string;
  commands: Readonly<Record<string, CommandDef>>;
}

export type CommandDef = LeafDef | GroupDef;

export function isGroup(def: CommandDef): def is GroupDef {
  return 'commands' in def;
}
