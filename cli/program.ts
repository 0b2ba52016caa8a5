/**
 * The one commander program of the CLI, built once from the command tree (cli/tree.ts). Parsing a
 * command line picks the command and its option values; commander prints help and the version
 * itself; every misuse becomes a UsageError (exit 2) that names the fix.
 */
import { Argument, CommanderError, Option, type Command } from 'commander';
import { BridgeCommand, commandPath, misuse } from './bridge-command';
import { isGroup, type GroupDef, type LeafDef, type OptionDef, type Parsed } from './command-spec';
import { UsageError } from './errors';
import { argumentsTerm, formatHelp } from './help';
import type { CliIo } from './io';

/** What a command line asks for: a command to run, or the exit code of an answer commander gave (help, version). */
export type Invocation = { def: LeafDef; parsed: Parsed } | { exitCode: number };

/** How the stack is chosen: said under the options of every command that takes --stack. */
const STACK_NOTE = `Runs against the running \`npm start\`, else the deployed stack --stack NAME (or BRIDGE_STACK) names;
with neither it stops and says so. Region, ready file and endpoints: \`npx bridge help environment\`.`;

const JSON_OPTION: OptionDef = { help: 'print one JSON document on stdout instead of text' };

/** commander's exits that answer the command line rather than refuse it. */
const ANSWERED = new Set(['commander.helpDisplayed', 'commander.version']);

export interface ProgramText {
  title: string;
  /** After the list of commands in the main help. */
  footer: string;
  version: string;
}

export class Program {
  readonly root: BridgeCommand;
  /** Where commander writes help and the version during a parse. */
  private io: CliIo | undefined;
  private invoked: Invocation | undefined;

  constructor(text: ProgramText, commands: GroupDef['commands']) {
    this.root = new BridgeCommand('bridge')
      .description(text.title)
      .version(text.version, '-V, --version', "the bridge's version")
      .helpCommand(false)
      .enablePositionalOptions()
      .exitOverride()
      .configureOutput({ writeOut: (chunk) => this.io?.stdout.write(chunk), writeErr: (chunk) => this.io?.stderr.write(chunk) })
      .configureHelp({ formatHelp, helpWidth: 110 });
    this.root.note = text.footer;
    this.addGroup(this.root, { summary: text.title, commands });
  }

  /** Reads a command line (synchronously: commander's output goes to this `io`). */
  parse(argv: readonly string[], io: CliIo): Invocation {
    this.io = io;
    this.invoked = undefined;
    try {
      this.root.parse([...argv], { from: 'user' });
    } catch (err) {
      if (err instanceof CommanderError) return { exitCode: ANSWERED.has(err.code) ? 0 : 2 };
      throw err;
    } finally {
      this.io = undefined;
    }
    return this.take();
  }

  private take(): Invocation {
    const invoked = this.invoked;
    this.invoked = undefined;
    if (invoked === undefined) throw new Error('the command line picked no command');
    return invoked;
  }

  private addGroup(cmd: BridgeCommand, def: GroupDef): void {
    cmd.sharedNote = def.shared;
    // A group runs only to say what is missing or unknown; the program alone prints its help (exit 2).
    cmd
      .argument('[command]')
      .allowExcessArguments()
      .action((word?: string) => {
        if (word !== undefined || cmd.parent !== null) throw misuse(cmd, word);
        cmd.outputHelp({ error: true });
        this.invoked = { exitCode: 2 };
      });
    for (const [name, child] of Object.entries(def.commands)) {
      const sub = cmd.command(name).summary(child.summary);
      if (isGroup(child)) this.addGroup(sub, child);
      else this.addLeaf(sub, child);
    }
  }

  private addLeaf(cmd: BridgeCommand, def: LeafDef): void {
    for (const arg of def.args ?? []) {
      const argument = new Argument(arg.variadic === true ? `[${arg.name}...]` : `[${arg.name}]`);
      // Shown in help and completion; the command checks them, so its message can name the fix.
      if (arg.choices !== undefined) argument.argChoices = [...arg.choices];
      cmd.addArgument(argument);
    }
    for (const [name, option] of Object.entries({ ...def.options, json: JSON_OPTION })) cmd.addOption(optionOf(name, option));
    cmd
      .usage(def.synopsis ?? `${argumentsTerm(cmd)} [options]`.trimStart())
      .description(def.description ?? '')
      .allowExcessArguments()
      .action(() => {
        this.invoked = { def, parsed: parsedOf(cmd, def) };
      });
    if ('stack' in def.options) cmd.note = STACK_NOTE;
  }
}

function optionOf(name: string, def: OptionDef): Option {
  const value = def.value === undefined ? '' : def.preset !== undefined ? ` [${def.value}]` : ` <${def.value}>`;
  const option = new Option(`${def.short !== undefined ? `-${def.short}, ` : ''}--${name}${value}`, def.help);
  if (def.preset !== undefined) option.preset(def.preset);
  if (def.multiple === true) option.argParser((item: string, previous: string[] | undefined) => [...(previous ?? []), item]);
  if (def.group !== undefined) option.helpGroup(def.group);
  if (def.listedOnce === true) option.hideHelp();
  return option;
}

/** The handler's view: option values by long name, and the positionals (none beyond those declared). */
function parsedOf(cmd: Command, def: LeafDef): Parsed {
  const command = commandPath(cmd);
  const values: Parsed['values'] = {};
  for (const option of cmd.options) values[option.name()] = cmd.getOptionValue(option.attributeName()) as Parsed['values'][string];
  const positionals = [...cmd.args];
  const args = def.args ?? [];
  if (!args.some((arg) => arg.variadic === true) && positionals.length > args.length)
    throw new UsageError(`unexpected argument "${positionals[args.length] ?? ''}"`, command);
  return { command, values, positionals, node: cmd };
}
