/** `bridge completion bash|zsh`: a shell completion script for the commands and their flags. */
import { UsageError } from './errors';

/** Command words → the flags each takes (kept beside the parsers' option lists in help). */
const WORDS: Record<string, string> = {
  '': 'dlq send smoke trigger tail doctor secrets slack subscriptions completion help --version --help',
  dlq: 'stats peek replay cancel',
  secrets: 'set signing',
  'secrets signing': 'add remove list',
  'secrets set': 'read-api-key slack-token slack-signing-secret',
  send: 'run.completed draft.ready --url --secret --project --duplicate --age',
  smoke: '--project --timeout',
  trigger: 'run.completed draft.ready --fixture --override --url --secret',
  tail: '--all --since',
  slack: 'manifest command outage',
  subscriptions: 'list add remove',
  completion: 'bash zsh',
};
const COMMON = '--json --help --local --stack --region';

function bashScript(): string {
  const cases = Object.entries(WORDS)
    .map(([words, next]) => `    "${words}") opts="${next} ${words === '' ? '' : COMMON}" ;;`)
    .join('\n');
  return `# bridge completion (bash): eval "$(npx bridge completion bash)"
_bridge() {
  local cur words opts
  cur="\${COMP_WORDS[COMP_CWORD]}"
  words="\${COMP_WORDS[*]:1:COMP_CWORD-1}"
  words="\${words%% -*}"
  case "$words" in
${cases}
    *) opts="${COMMON}" ;;
  esac
  COMPREPLY=( $(compgen -W "$opts" -- "$cur") )
}
complete -F _bridge bridge
`;
}

export function completionScript(shell: string | undefined): string {
  if (shell === 'bash') return bashScript();
  // zsh runs bash completions through bashcompinit.
  if (shell === 'zsh')
    return `# bridge completion (zsh): eval "$(npx bridge completion zsh)"\nautoload -U +X bashcompinit && bashcompinit\n${bashScript()}`;
  throw new UsageError(`completion needs a shell: bash or zsh${shell === undefined ? '' : `, got "${shell}"`}`, 'completion');
}
