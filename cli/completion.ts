/**
 * `bridge completion bash|zsh|fish`: a shell completion script, generated from the program's command
 * tree. It completes the command as typed, `npx bridge …`, and a bare `bridge` only when this
 * package's bin is the `bridge` on PATH (elsewhere on Linux it is iproute2's tool). The script is
 * static: written to a file once and sourced, a shell start pays only for defining two functions.
 */
import { accessSync, constants, realpathSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { ancestry, commandPath, isLeaf } from './bridge-command';
import type { LeafDef } from './command-spec';
import { UsageError } from './errors';
import type { CliIo } from './io';

/** What may follow each command line (keyed by its words): subcommands, argument words, flags. */
function completions(cmd: Command): [string, string[]][] {
  const path = commandPath(cmd);
  const flags = [...cmd.options.flatMap((option) => (option.long === undefined ? [] : [option.long])), '--help'];
  if (!isLeaf(cmd)) return [[path, [...cmd.commands.map((child) => child.name()), ...flags]], ...cmd.commands.flatMap(completions)];
  const words = cmd.registeredArguments[0]?.argChoices ?? [];
  return [[path, [...words, ...flags]], ...words.map((word): [string, string[]] => [`${path} ${word}`, flags])];
}

/** The commands a script completes: `npx` (when its first word is `bridge`), and `bridge` when it is ours. */
interface Targets {
  bare: boolean;
}

const BIN = fileURLToPath(new URL('./bridge.mjs', import.meta.url));

/** Whether the first `bridge` on PATH is this package's bin (a global install or `npm link`). */
function bridgeOnPathIsOurs(env: Readonly<Record<string, string | undefined>>): boolean {
  for (const dir of (env['PATH'] ?? '').split(delimiter).filter((d) => d !== '')) {
    const candidate = join(dir, 'bridge');
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    try {
      return realpathSync(candidate) === realpathSync(BIN);
    } catch {
      return false;
    }
  }
  return false;
}

const FILES: Record<string, string> = {
  bash: '~/.local/share/bridge/completion.bash',
  zsh: '~/.local/share/bridge/completion.zsh',
  fish: '~/.config/fish/conf.d/bridge.fish',
};

function header(shell: string, load: string): string {
  return `# bridge completion (${shell}), for \`npx bridge …\`. Write it to a file once and load that file:
#   mkdir -p $(dirname ${FILES[shell] ?? ''}) && npx bridge completion ${shell} > ${FILES[shell] ?? ''}
# ${load}
# Regenerate it after an upgrade that adds commands or options.
`;
}

function bashScript(root: Command, targets: Targets): string {
  const cases = completions(root)
    .map(([words, next]) => `    "${words}") opts="${next.join(' ')}" ;;`)
    .join('\n');
  return `${header('bash', `then add to ~/.bashrc: source ${FILES['bash'] ?? ''}`)}_bridge_words() {
  # $1: the index of the first word after \`bridge\`; prints the command words typed so far (up to the first option).
  local i words=""
  for (( i = $1; i < COMP_CWORD; i++ )); do
    [[ \${COMP_WORDS[i]} == -* ]] && break
    words="\${words:+$words }\${COMP_WORDS[i]}"
  done
  printf '%s' "$words"
}
_bridge_complete() {
  local opts
  case "$(_bridge_words "$1")" in
${cases}
    *) opts="--help" ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "\${COMP_WORDS[COMP_CWORD]}") )
}
_bridge_npx() {
  if (( COMP_CWORD == 1 )); then COMPREPLY=( $(compgen -W "bridge" -- "\${COMP_WORDS[1]}") ); return; fi
  [[ \${COMP_WORDS[1]} == bridge ]] && _bridge_complete 2
}
_bridge() { _bridge_complete 1; }
complete -o default -F _bridge_npx npx
${targets.bare ? 'complete -F _bridge bridge\n' : ''}`;
}

function zshScript(root: Command, targets: Targets): string {
  const cases = completions(root)
    .map(([words, next]) => `    "${words}") opts=(${next.join(' ')}) ;;`)
    .join('\n');
  return `${header('zsh', `then add to ~/.zshrc, after compinit: source ${FILES['zsh'] ?? ''}`)}_bridge() {
  local -a opts typed
  local first=2 word
  if [[ \${words[1]} == npx ]]; then
    if (( CURRENT == 2 )); then compadd bridge; _default; return; fi
    [[ \${words[2]} == bridge ]] || { _default; return; }
    first=3
  fi
  for word in \${words[first,CURRENT-1]}; do
    [[ $word == -* ]] && break
    typed+=($word)
  done
  case "\${typed[*]}" in
${cases}
    *) opts=(--help) ;;
  esac
  compadd -- $opts
}
compdef _bridge npx${targets.bare ? ' bridge' : ''}
`;
}

function fishScript(root: Command, targets: Targets): string {
  const cases = completions(root)
    .map(([words, next]) => `        case '${words}'\n            printf '%s\\n' ${next.join(' ')}`)
    .join('\n');
  return `${header('fish', 'fish loads every file in ~/.config/fish/conf.d/ at start')}function __bridge_typed
    # The command words typed after \`bridge\` (up to the first option).
    set -l tokens (commandline -opc)
    if test "$tokens[1]" = npx
        set tokens $tokens[3..-1]
    else
        set tokens $tokens[2..-1]
    end
    set -l typed
    for token in $tokens
        string match -q -- '-*' $token; and break
        set typed $typed $token
    end
    string join ' ' $typed
end
function __bridge_next
    switch (__bridge_typed)
${cases}
        case '*'
            printf '%s\\n' --help
    end
end
function __bridge_after_npx
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = bridge
end
complete -c npx -n 'test (count (commandline -opc)) -eq 1' -a bridge -d 'operate the visibility bridge'
complete -c npx -n __bridge_after_npx -f -a '(__bridge_next)'
${targets.bare ? "complete -c bridge -f -a '(__bridge_next)'\n" : ''}`;
}

const SCRIPTS: Record<string, (root: Command, targets: Targets) => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };
const SHELLS = Object.keys(SCRIPTS);

export const COMPLETION: LeafDef = {
  summary: 'a shell completion script for `npx bridge` (bash, zsh, fish), to write to a file once',
  description: `Prints a completion script for \`npx bridge\` (and \`bridge\` when this package's bin is the bridge on
PATH): its commands, arguments and flags. Write it to a file once and load that file at shell start
(sourcing it takes a few milliseconds; running \`npx bridge\` in every new shell would take seconds):
  mkdir -p ~/.local/share/bridge && npx bridge completion bash > ${FILES['bash'] ?? ''}
  then in ~/.bashrc:  source ${FILES['bash'] ?? ''}
zsh: the same with zsh and completion.zsh, sourced after compinit in ~/.zshrc.
fish: npx bridge completion fish > ${FILES['fish'] ?? ''}
Write the file again after an upgrade.`,
  args: [{ name: 'shell', choices: SHELLS }],
  options: {},
  run: (parsed, io: CliIo) => {
    const [shell] = parsed.positionals;
    const script = shell === undefined ? undefined : SCRIPTS[shell];
    if (script === undefined)
      throw new UsageError(
        `completion needs a shell: ${SHELLS.join(', ')}${shell === undefined ? '' : `; got "${shell}"`}`,
        parsed.command,
      );
    io.stdout.write(script(ancestry(parsed.node)[0] ?? parsed.node, { bare: bridgeOnPathIsOurs(io.env ?? process.env) }));
    return Promise.resolve({ exitCode: 0, json: undefined });
  },
};
