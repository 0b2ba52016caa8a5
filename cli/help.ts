/**
 * The help of every command, laid out from the program's command tree (commander's `configureHelp`):
 * usage lines from the commands and their arguments, option lists from their options. Nothing here
 * names a command or an option.
 */
import type { Command, Help, Option } from 'commander';
import { ancestry, BridgeCommand, commandWords, isLeaf, leavesBeneath } from './bridge-command';
import { didYouMean } from './args';
import type { LeafDef } from './command-spec';
import { CliError } from './errors';

/** Terms wider than this put their description on the next line. */
const TERM_WIDTH = 34;
const DEFAULT_GROUP = 'Options:';
/** The same for the main help's list of commands. */
const OVERVIEW_WIDTH = 44;

function item(helper: Help, term: string, description: string, width = TERM_WIDTH): string {
  if (term.length <= width) return helper.formatItem(term, width, description, helper);
  return `  ${term}\n${helper.formatItem('', width, description, helper)}`;
}

/** A command's arguments as its usage shows them: the words it takes (`bash|zsh`), else their names. */
export function argumentsTerm(cmd: Command): string {
  return cmd.registeredArguments
    .map((arg) => arg.argChoices?.join('|') ?? (arg.variadic ? `[${arg.name()}...]` : `<${arg.name()}>`))
    .join(' ');
}

/** One usage line per leaf, with its summary. */
function usageItem(helper: Help, leaf: Command): string {
  return item(helper, `${commandWords(leaf)} ${leaf.usage()}`, leaf.summary());
}

/**
 * The main help's lines: a group's sibling commands share one line (`dlq stats|peek|replay|cancel`),
 * a group's only command and a command of the program show their arguments, nested groups get their
 * own lines.
 */
function overview(cmd: Command): [string, string][] {
  const line = (words: string, summary: string): [string, string] => [words.trimEnd(), summary];
  if (isLeaf(cmd)) return [line(`${commandWords(cmd)} ${argumentsTerm(cmd)}`, cmd.summary())];
  const leaves = cmd.commands.filter(isLeaf);
  const own =
    leaves.length === 1 && leaves[0] !== undefined
      ? overview(leaves[0])
      : leaves.length > 1
        ? [line(`${commandWords(cmd)} ${leaves.map((leaf) => leaf.name()).join('|')}`, cmd.summary())]
        : [];
  return [...own, ...cmd.commands.filter((child) => !isLeaf(child)).flatMap(overview)];
}

function optionItems(helper: Help, cmd: Command): string[] {
  const groups = new Map<string, Option[]>();
  for (const option of helper.visibleOptions(cmd)) {
    if (option.long === '--help') continue; // every command has it; the main help says so
    const heading = option.helpGroupHeading ?? DEFAULT_GROUP;
    groups.set(heading, [...(groups.get(heading) ?? []), option]);
  }
  return [...groups].flatMap(([heading, options]) => [
    '',
    heading,
    ...options.map((option) => item(helper, helper.optionTerm(option), option.description)),
  ]);
}

function rootHelp(cmd: Command, helper: Help): string[] {
  const own = helper
    .visibleOptions(cmd)
    .filter((option) => option.long !== '--help')
    .map((option) => item(helper, `${commandWords(cmd)} ${option.long ?? option.flags}`, option.description, OVERVIEW_WIDTH));
  const lines = cmd.commands.flatMap(overview);
  const width = Math.min(OVERVIEW_WIDTH, Math.max(...lines.map(([term]) => term.length)));
  return [cmd.description(), '', 'Usage:', ...lines.map(([term, summary]) => item(helper, term, summary, width)), ...own];
}

function groupHelp(cmd: Command, helper: Help): string[] {
  return [
    'Usage:',
    ...leavesBeneath(cmd).map((leaf) => usageItem(helper, leaf)),
    '',
    `Run \`${commandWords(cmd)} <${cmd.commands.map((child) => child.name()).join('|')}> --help\` for details.`,
  ];
}

function leafHelp(cmd: Command, helper: Help): string[] {
  const description = cmd.description();
  return [`Usage: ${commandWords(cmd)} ${cmd.usage()}`, ...(description === '' ? [] : ['', description]), ...optionItems(helper, cmd)];
}

/** The command's own note, then the notes its groups share with every command beneath them. */
function notes(cmd: Command): string[] {
  const own = cmd instanceof BridgeCommand ? [cmd.note] : [];
  const shared = ancestry(cmd).map((at) => (at instanceof BridgeCommand ? at.sharedNote : undefined));
  return [...own, ...shared.reverse()].flatMap((note) => (note === undefined ? [] : ['', note]));
}

/** commander's `formatHelp`: the whole help of `cmd`, ending in a newline. */
export function formatHelp(cmd: Command, helper: Help): string {
  const lines = cmd.parent === null ? rootHelp(cmd, helper) : isLeaf(cmd) ? leafHelp(cmd, helper) : groupHelp(cmd, helper);
  return `${[...lines, ...notes(cmd)].join('\n').trimEnd()}\n`;
}

/** The help topic that is not a command: where commands run. */
const ENVIRONMENT_TOPIC = 'environment';

const ENVIRONMENT_PROSE = `Without --stack or --local a command uses the running \`npm start\` (its ready file .local/ready.json),
else the deployed stack in BRIDGE_STACK. With neither it stops (exit 2) and says how to pick one: no
command picks a deployed stack by itself. A deployed stack needs AWS credentials (AWS_PROFILE, SSO, or
AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY) and a region (--region or AWS_REGION).

Environment:
  BRIDGE_STACK                  the deployed stack when no --stack is given and no local stack runs
  BRIDGE_READY_FILE             the local stack's ready file (default .local/ready.json)
  AWS_REGION, AWS_PROFILE       the region and credentials of a deployed stack
  AWS_ENDPOINT_URL_<SERVICE>    an endpoint per service, as the AWS SDK reads it (AWS_ENDPOINT_URL: all)
  NO_COLOR                      no colour, even on a terminal`;

/** `bridge help environment`: the options every command shares, said once, and the environment. */
function environmentHelp(root: Command): string {
  const shared = new Map<string, Option>();
  for (const leaf of leavesBeneath(root)) for (const option of leaf.options) if (option.hidden) shared.set(option.flags, option);
  const width = Math.max(...[...shared.keys()].map((flags) => flags.length)) + 2;
  const lines = [...shared.values()].map((option) => `  ${option.flags.padEnd(width)}${option.description}`);
  return `Where a command runs (every command that reads or changes a stack takes these):\n${lines.join('\n')}\n\n${ENVIRONMENT_PROSE}\n`;
}

/** `bridge help [command...]`: the help of the command named, as `--help` prints it, or a topic's. */
export const HELP_COMMAND: LeafDef = {
  summary: `this help, a command's, or \`help ${ENVIRONMENT_TOPIC}\` (where commands run)`,
  args: [{ name: 'command', variadic: true }],
  options: {},
  run: (parsed, io) => {
    const root = ancestry(parsed.node)[0] ?? parsed.node;
    if (parsed.positionals.join(' ') === ENVIRONMENT_TOPIC) {
      io.stdout.write(environmentHelp(root));
      return Promise.resolve({ exitCode: 0, json: undefined });
    }
    let cmd = root;
    for (const word of parsed.positionals) {
      const next = cmd.commands.find((child) => child.name() === word);
      if (next === undefined) {
        const topics = [...cmd.commands.map((child) => child.name()), ...(cmd === root ? [ENVIRONMENT_TOPIC] : [])];
        throw new CliError(
          `unknown help topic "${parsed.positionals.join(' ')}"${didYouMean(word, topics)}`,
          `\`npx bridge help\` lists the commands; \`npx bridge help ${ENVIRONMENT_TOPIC}\` says where they run`,
          'unknown_topic',
        );
      }
      cmd = next;
    }
    io.stdout.write(cmd.helpInformation());
    return Promise.resolve({ exitCode: 0, json: undefined });
  },
};
