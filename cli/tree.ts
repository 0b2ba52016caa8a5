/**
 * Every command of the CLI, in the order the main help lists them. A command is added here and in its
 * own module (its arguments, options, help and handler); the program, the help and the shell
 * completion all follow from this table.
 */
import type { CommandDef } from './command-spec';
import { COMPLETION } from './completion';
import { CONNECTIONS } from './commands/connections';
import { DLQ } from './commands/dlq';
import { DOCTOR } from './commands/doctor';
import { SECRETS } from './commands/secrets';
import { SEND } from './commands/send';
import { SLACK } from './commands/slack';
import { SMOKE } from './commands/smoke';
import { SUBSCRIPTIONS } from './commands/subscriptions';
import { TAIL } from './commands/tail';
import { TRIGGER } from './commands/trigger';
import { HELP_COMMAND } from './help';

export const COMMANDS: Readonly<Record<string, CommandDef>> = {
  dlq: DLQ,
  trigger: TRIGGER,
  send: SEND,
  tail: TAIL,
  doctor: DOCTOR,
  smoke: SMOKE,
  secrets: SECRETS,
  slack: SLACK,
  subscriptions: SUBSCRIPTIONS,
  connections: CONNECTIONS,
  completion: COMPLETION,
  help: HELP_COMMAND,
};

export const TITLE = 'bridge — operate the visibility webhook → Slack bridge';

export const FOOTER = `Every command takes --json (one JSON document on stdout) and --help. Next to a running
\`npm start\` every command uses the local stack by itself; --stack NAME (or BRIDGE_STACK) picks a
deployed one. With neither, a command stops and says so: no command picks a deployed stack by itself.
Commands that act on one client's data take --connection ID (a connection, \`connections list\`):
\`trigger\` and \`doctor\`; a local stack started with N clients names them client-a, client-b, …
\`npx bridge help environment\`: the options that pick the stack, the region and endpoints, said once.
Colour only on a terminal, never with NO_COLOR set.
Exit codes: 0 ok, 1 a check or operation failed (or a selector matched nothing), 2 usage error.`;
