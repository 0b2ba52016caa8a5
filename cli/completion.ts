/** `bridge completion bash|zsh`: a shell completion script, generated from the program's command tree. */
import type { Command } from 'commander';
import { ancestry, commandPath, isLeaf } from './bridge-command';
import type { LeafDef } from './command-spec';
import { UsageError } from './errors';

/** What may follow each command line (keyed by its words): subcommands, argument words, flags. */
function completions(cmd: Command): [string, string[]][] {
  const path = commandPath(cmd);
  const flags = [...cmd.options.flatMap((option) => (option.long === undefined ? [] : [option.long])), '--help'];
  if (!isLeaf(cmd)) return [[path, [...cmd.commands.map((child) => child.name()), ...flags]], ...cmd.commands.flatMap(completions)];
  const words = cmd.registeredArguments[0]?.argChoices ?? [];
  return [[path, [...words, ...flags]], ...words.map((word): [string, string[]] => [`${path} ${word}`, flags])];
}

function bashScript(root: Command): string {
  const cases = completions(root)
    .map(([words, next]) => `    "${words}") opts="${next.join(' ')}" ;;`)
    .join('\n');
  return `# bridge completion (bash): eval "$(npx bridge completion bash)"
_bridge() {
  local cur words opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  words="\${COMP_WORDS[*]:1:COMP_CWORD-1}"
  words="\${words%% -*}"
  case "$words" in
${cases}
    *) opts="--help" ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -F _bridge bridge
`;
}

const SCRIPTS: Record<string, (root: Command) => string> = {
  bash: bashScript,
  // zsh runs bash completions through bashcompinit.
  zsh: (root) =>
    `# bridge completion (zsh): eval "$(npx bridge completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${bashScript(root)}`,
};
const SHELLS = Object.keys(SCRIPTS);

export const COMPLETION: LeafDef = {
  summary: 'shell completion: eval "$(npx bridge completion bash)"',
  description: `Prints a completion script for the commands and their flags. Load it in the current shell with
  eval "$(npx bridge completion bash)"      (zsh: eval "$(npx bridge completion zsh)")
or add that line to ~/.bashrc / ~/.zshrc.`,
  args: [{ name: 'shell', choices: SHELLS }],
  options: {},
  run: (parsed, io) => {
    const [shell] = parsed.positionals;
    const script = shell === undefined ? undefined : SCRIPTS[shell];
    if (script === undefined)
      throw new UsageError(
        `completion needs a shell: ${SHELLS.join(' or ')}${shell === undefined ? '' : `, got "${shell}"`}`,
        parsed.command,
      );
    io.stdout.write(script(ancestry(parsed.node)[0] ?? parsed.node));
    return Promise.resolve({ exitCode: 0, json: undefined });
  },
};
