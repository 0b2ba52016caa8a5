/** Usage text of every command (`bridge <command> --help`). */
import { SLACK_HELP } from './commands/slack';
import { SUBSCRIPTIONS_HELP } from './commands/subscriptions';

const STACK_FLAGS = `Where:
  --stack NAME          the deployed stack to use (its outputs name the queues, table, secrets…)
  --region REGION       AWS region (default: AWS_REGION / your profile)
  --local READY_FILE    use the local stack (\`npm start\`) described by its ready file
                        (default: .local/ready.json or BRIDGE_READY_FILE when that stack runs
                        and no --stack is given)
  Without --stack or --local: the running \`npm start\`, else the stack in BRIDGE_STACK. Commands
  that send or change something stop there (exit 2: start \`npm start\`, or name the stack with
  --stack); read-only ones fall back to VisibilitySlackBridge-prod and say which stack they read.
  --endpoint-sqs URL, --endpoint-dynamodb URL, --endpoint-secretsmanager URL, --endpoint-cloudformation URL
                        endpoint overrides (also read from AWS_ENDPOINT_URL_<SERVICE>)
  --json                print one JSON document on stdout instead of text`;

export const HELP: Record<string, string> = {
  main: `bridge — operate the visibility webhook → Slack bridge

Usage:
  npx bridge dlq stats|peek|replay|cancel [options]  look at / move back dead-lettered digest events
  npx bridge trigger run.completed|draft.ready ...   send a signed event from a fixture, with overrides
  npx bridge send run.completed|draft.ready ...      send a signed test delivery built from flags
  npx bridge tail [options]                          stream deliveries, digests and failures live
  npx bridge doctor [options]                        check the deployment end to end
  npx bridge smoke --stack NAME [--project ID]       one signed delivery, followed hop by hop to Slack
  npx bridge secrets set read-api-key|slack-token|slack-signing-secret ...
  npx bridge secrets signing add|remove|list ...     manage the webhook signing secrets
  npx bridge slack manifest|command ...              the Slack app: its manifest, a signed test command
  npx bridge subscriptions list|add|remove ...       the Slack app's project ↔ channel subscriptions
  npx bridge completion bash|zsh                     shell completion: eval "$(npx bridge completion bash)"
  npx bridge help [command]                          this help, or a command's
  npx bridge --version                               the bridge's version

Every command takes --json (one JSON document on stdout) and --help. Next to a running
\`npm start\` every command uses the local stack by itself; --stack NAME (or BRIDGE_STACK) picks a
deployed one. Commands that send or change something never pick a deployed stack by themselves.
Colour only on a terminal, never with NO_COLOR set.
Exit codes: 0 ok, 1 a check or operation failed (or a selector matched nothing), 2 usage error.`,

  dlq: `Usage:
  npx bridge dlq stats   [--queue-url URL] [--dlq-url URL] [--endpoint URL]
  npx bridge dlq peek    [--max N]
  npx bridge dlq replay  [--rate N] [--dry-run]
  npx bridge dlq replay  (--event-id ID ... | --type T | --project P | --older-than DURATION) [--dry-run]
  npx bridge dlq cancel

Run \`npx bridge dlq <stats|peek|replay|cancel> --help\` for details.`,

  'dlq cancel': `Usage: npx bridge dlq cancel [options]

Stops the DLQ's running message move task (started by \`npx bridge dlq replay\` without a selector).
Messages already moved stay moved; the rest stay in the DLQ. Exit 1 when no task is running.
${STACK_FLAGS}`,

  completion: `Usage: npx bridge completion bash|zsh

Prints a completion script for the commands and their flags. Load it in the current shell with
  eval "$(npx bridge completion bash)"      (zsh: eval "$(npx bridge completion zsh)")
or add that line to ~/.bashrc / ~/.zshrc.`,

  'dlq stats': `Usage: npx bridge dlq stats [options]

Shows how many messages wait in the DLQ and the digest queue (visible / in flight / delayed).
The age of the oldest message is a CloudWatch metric only; \`npx bridge dlq peek\` shows each message's age.

Queues:
  --queue-url URL, --dlq-url URL   instead of the stack outputs QueueUrl / DlqUrl
  --endpoint URL                   SQS endpoint (e.g. a local SQS-compatible server)
${STACK_FLAGS}`,

  'dlq peek': `Usage: npx bridge dlq peek [--max N] [options]

Shows DLQ messages (event id, type, project, age since received, receive count) without consuming
them: they are hidden for a few seconds while read and made visible again at once.

  --max N                          at most N messages (default 10)
  --dlq-url URL, --endpoint URL    instead of the stack output DlqUrl / the default SQS endpoint
${STACK_FLAGS}`,

  'dlq replay': `Usage: npx bridge dlq replay [selectors] [--rate N] [--dry-run] [options]

Without a selector, moves the whole DLQ back to the digest queue with an SQS message move task and
shows its progress until it ends. With selectors, moves only matching messages (receive → send with
the same body and attributes → delete once sent); the others stay in the DLQ untouched.

Selectors (all given must match; --event-id may repeat):
  --event-id ID                    this event (repeatable)
  --type T                         run.completed or draft.ready
  --project P                      this project id
  --older-than DURATION            received longer ago than this (90s, 30m, 2h, 1d)
Options:
  --rate N                         whole-DLQ move: at most N messages per second (1–500)
  --dry-run                        show what would move; move nothing
  --queue-url URL, --dlq-url URL, --endpoint URL
${STACK_FLAGS}`,

  send: `Usage: npx bridge send run.completed|draft.ready [--stack NAME | --local READY_FILE | --url URL --secret S] [options]

Builds a delivery exactly as the service does (body {id, type, created_at, data}; headers
Content-Type, User-Agent Service-Webhooks/1, X-Service-Event, X-Service-Delivery, X-Service-Signature),
POSTs it without following redirects (10 s timeout) and prints each attempt's status, body and latency.

The URL, the signing secret and the project come from the running \`npm start\` (or --local), or
from --stack NAME (outputs WebhookUrl and SigningSecretsSecretArn; the project: the first in
SlackProjectChannels, else the first the read API lists); --url, --secret and --project override them.

  --url URL              the webhook URL (stack output WebhookUrl)
  --secret S             the signing secret
  --stack NAME           a deployed stack (--region REGION, --endpoint-* as for every command)
  --local READY_FILE     take url, secret and project from the local stack's ready file
  --project P            data.project_id (required with --url and --secret)
  --run R                run.completed data.run_id (default: a new UUID)
  --answers N            run.completed data.answers (default 0)
  --asset A              draft.ready data.asset_id (default: a new UUID)
  --version V            draft.ready data.version (default 1)
  --delivery-id ID       the event id, in the header and the body (default: a new UUID)
  --duplicate [N]        send the same delivery N more times (same id and body); alone: once more
  --age SECONDS          sign with a timestamp this old (stale test); negative for the future
  --json                 one JSON document on stdout
Exit 1 when any attempt is not answered 2xx.`,

  trigger: `Usage: npx bridge trigger run.completed|draft.ready [--fixture FILE] [--override path=value ...] [options]

Sends one correctly signed event to the webhook, like \`stripe trigger\`: the body is a built-in
fixture (or FILE: a whole event {"data": {…}} or only its data), with a fresh id and created_at.
--override path=value (repeatable) sets a field; a path outside id/created_at/data is under data,
the value is JSON when it parses (answers=12, data.project_id=p1, created_at=2026-01-01T00:00:00Z).
The URL and the signing secret come from the local stack's ready file (its live Secrets Manager),
or the stack outputs WebhookUrl / SigningSecretsSecretArn; --url and --secret override them.
Exit 1 when the webhook does not answer 2xx.
${STACK_FLAGS}`,

  tail: `Usage: npx bridge tail [--all] [--since DURATION] [--json] [options]

Streams deliveries (accepted, rejected, duplicates), digests posted and failures (warnings and
errors) as they happen, until Ctrl-C. Local stack: the event stream \`npm start\` serves (eventsUrl
in its ready file). Deployed stack: the ingest and digest functions' CloudWatch log groups, polled
every 2 s (stack outputs IngestFunctionName / DigestFunctionName).

  --all                 every log line, not only deliveries, digests and failures
  --since DURATION      AWS: start this far back (default 1m)
  --json                each raw event as one JSON line (NDJSON)
  --endpoint-logs URL   CloudWatch Logs endpoint (also AWS_ENDPOINT_URL_CLOUDWATCH_LOGS)
${STACK_FLAGS}`,

  doctor: `Usage: npx bridge doctor [options]

Checks, each with its fix when it fails:
  the stack exists · each secret is set (not PLACEHOLDER; signing secrets a JSON array; the Slack
  signing secret as Slack shows it, or a JSON array of them) ·
  the read-API key works (GET /v1/projects) · the Slack token is valid (auth.test) · the bot is in
  every configured channel · the DLQ is empty · the last accepted delivery is recent.
Exit 1 when any check fails (an old last delivery is a warning).

  --silence-hours H      warn when the last accepted delivery is older (default 26)
  --slack-api-url URL    Slack Web API base (default https://slack.com/api/; SLACK_API_URL)
  --read-api-url URL     instead of the stack output ReadApiBaseUrl
${STACK_FLAGS}`,

  secrets: `Usage:
  npx bridge secrets set read-api-key|slack-token|slack-signing-secret [--secret-id ID]
  npx bridge secrets signing add [--secret-id ID]
  npx bridge secrets signing remove (--index N | --value S | --value -) [--secret-id ID]
  npx bridge secrets signing list [--secret-id ID]

The value is read from stdin when it is piped (\`pbpaste | npx bridge secrets set read-api-key\`),
or asked for at a prompt that does not echo when stdin is a terminal; either way it stays out of
your shell history. --value V still works for read-api-key, slack-token and signing add (it lands in
the history); --value - and --value-stdin mean stdin. The Slack signing secret is never taken from
the command line: it is the plain secret as Slack shows it (Basic Information → App Credentials),
or a JSON array of them while it is regenerated.
Values are trimmed and never printed: only a fingerprint, the first 8 hex digits of the value's
SHA-256 (sha256:3f9a1c2b), which tells secrets apart without revealing them.
Secret ids come from the stack outputs (ReadApiKeySecretArn, SlackTokenSecretArn,
SlackSigningSecretSecretArn, SigningSecretsSecretArn), or, on the local stack, from its ready file
(\`npm start\` runs a local Secrets Manager; the local functions re-read it every 2 s; its Slack
signing secret is generated per start and not set here), unless --secret-id is given.

Rotating the signing secret: create a new webhook with the service, \`signing add\` its
secret, delete the old webhook, then \`signing remove\` the old secret. The last secret is never removed.
${STACK_FLAGS}`,
};

HELP['smoke'] = `Usage: npx bridge smoke --stack NAME [--project ID] [--timeout DURATION] [--json] [options]

The check after a deploy: sends one signed run.completed to the stack's webhook (output WebhookUrl,
signed with the stack's own signing secret from Secrets Manager) and follows it through the stack's
own records, hop by hop:
  accepted   the webhook answered 200 "accepted"
  queued     ingest's dedup record delivery#<id> is completed (the message is on the digest queue)
  digested   the digest claim digest#<id> exists: the digest function took the event up
  posted     the claim is posted, with each channel's message ts (post#<channel>#<id>)
It waits up to --timeout for the last hop; a message found in the DLQ ends the wait. Exit 0 when
every hop passes, 1 naming the hop that failed and its fix. This posts a real digest of the project
to its channels (the run id starts with smoke-).

  --project ID           the project of the test run (default: the first project in the stack's
                         SlackProjectChannels, else the first the read API lists with the stack's key)
  --timeout DURATION     how long to wait for the records (default 60s; 90, 90s, 2m)
Without --stack it checks the running \`npm start\` (\`npx bridge smoke\`).
${STACK_FLAGS}`;

HELP['secrets set'] = HELP['secrets'] ?? '';
HELP['secrets signing'] = HELP['secrets'] ?? '';
HELP['secrets signing add'] = HELP['secrets'] ?? '';
HELP['secrets signing remove'] = HELP['secrets'] ?? '';
HELP['secrets signing list'] = HELP['secrets'] ?? '';

/** The most specific help for the words of a command line ("dlq replay" → the replay help). */
export function helpFor(words: readonly string[]): string {
  for (let n = Math.min(words.length, 3); n > 0; n--) {
    const text = HELP[words.slice(0, n).join(' ')];
    if (text !== undefined) return text;
  }
  return HELP['main'] ?? '';
}

Object.assign(HELP, SLACK_HELP, SUBSCRIPTIONS_HELP);
