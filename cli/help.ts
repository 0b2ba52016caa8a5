/** Usage text of every command (`bridge <command> --help`). */
import { SLACK_HELP } from './commands/slack';
import { SUBSCRIPTIONS_HELP } from './commands/subscriptions';

const STACK_FLAGS = `Where:
  --stack NAME          stack to read outputs from (default VisibilitySlackBridge-prod)
  --region REGION       AWS region (default: AWS_REGION / your profile)
  --local READY_FILE    use the local stack (\`npm start\`) described by its ready file
  --endpoint-sqs URL, --endpoint-dynamodb URL, --endpoint-secretsmanager URL, --endpoint-cloudformation URL
                        endpoint overrides (also read from AWS_ENDPOINT_URL_<SERVICE>)
  --json                print one JSON document on stdout instead of text`;

export const HELP: Record<string, string> = {
  main: `bridge — operate the visibility webhook → Slack bridge

Usage:
  bridge dlq stats|peek|replay [options]     look at / move back dead-lettered digest events
  bridge send run.completed|draft.ready ...  send a signed test delivery to the webhook
  bridge doctor [options]                    check the deployment end to end
  bridge secrets set read-api-key|slack-token ...
  bridge secrets signing add|remove|list ...  manage the webhook signing secrets
  bridge slack manifest|command ...          the Slack app: its manifest, a signed test command
  bridge subscriptions list|add|remove ...   the Slack app's project ↔ channel subscriptions
  bridge help [command]                      this help, or a command's

Every command takes --json (one JSON document on stdout) and --help.
Exit codes: 0 ok, 1 a check or operation failed, 2 usage error.`,

  dlq: `Usage:
  bridge dlq stats   [--queue-url URL] [--dlq-url URL] [--endpoint URL]
  bridge dlq peek    [--max N]
  bridge dlq replay  [--rate N] [--dry-run]
  bridge dlq replay  (--event-id ID ... | --type T | --project P | --older-than DURATION) [--dry-run]

Run \`bridge dlq <stats|peek|replay> --help\` for details.`,

  'dlq stats': `Usage: bridge dlq stats [options]

Shows how many messages wait in the DLQ and the digest queue (visible / in flight / delayed).
The age of the oldest message is a CloudWatch metric only; \`bridge dlq peek\` shows each message's age.

Queues:
  --queue-url URL, --dlq-url URL   instead of the stack outputs QueueUrl / DlqUrl
  --endpoint URL                   SQS endpoint (e.g. a local SQS-compatible server)
${STACK_FLAGS}`,

  'dlq peek': `Usage: bridge dlq peek [--max N] [options]

Shows DLQ messages (event id, type, project, age since received, receive count) without consuming
them: they are hidden for a few seconds while read and made visible again at once.

  --max N                          at most N messages (default 10)
  --dlq-url URL, --endpoint URL    instead of the stack output DlqUrl / the default SQS endpoint
${STACK_FLAGS}`,

  'dlq replay': `Usage: bridge dlq replay [selectors] [--rate N] [--dry-run] [options]

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

  send: `Usage: bridge send run.completed|draft.ready --url URL --secret S [options]
       bridge send run.completed|draft.ready --local READY_FILE [options]

Builds a delivery exactly as the service does (body {id, type, created_at, data}; headers
Content-Type, User-Agent Service-Webhooks/1, X-Service-Event, X-Service-Delivery, X-Service-Signature),
POSTs it without following redirects (10 s timeout) and prints each attempt's status, body and latency.

  --url URL              the webhook URL (stack output WebhookUrl)
  --secret S             the signing secret
  --local READY_FILE     take url, secret and project from the local stack's ready file
  --project P            data.project_id (required unless --local)
  --run R                run.completed data.run_id (default: a new UUID)
  --answers N            run.completed data.answers (default 0)
  --asset A              draft.ready data.asset_id (default: a new UUID)
  --version V            draft.ready data.version (default 1)
  --delivery-id ID       the event id, in the header and the body (default: a new UUID)
  --duplicate N          send the same delivery N more times (same id and body)
  --age SECONDS          sign with a timestamp this old (stale test); negative for the future
  --json                 one JSON document on stdout
Exit 1 when any attempt is not answered 2xx.`,

  doctor: `Usage: bridge doctor [options]

Checks, each with its fix when it fails:
  the stack exists · each secret is set (not PLACEHOLDER; signing secrets a JSON array) ·
  the read-API key works (GET /v1/projects) · the Slack token is valid (auth.test) · the bot is in
  every configured channel · the DLQ is empty · the last accepted delivery is recent.
Exit 1 when any check fails (an old last delivery is a warning).

  --silence-hours H      warn when the last accepted delivery is older (default 26)
  --slack-api-url URL    Slack Web API base (default https://slack.com/api/; SLACK_API_URL)
  --read-api-url URL     instead of the stack output ReadApiBaseUrl
${STACK_FLAGS}`,

  secrets: `Usage:
  bridge secrets set read-api-key|slack-token (--value V | --value - | --value-stdin) [--secret-id ID]
  bridge secrets signing add (--value S | --value - | --value-stdin) [--secret-id ID]
  bridge secrets signing remove (--value S | --index N) [--secret-id ID]
  bridge secrets signing list [--secret-id ID]

Values are trimmed and never printed (only a fingerprint: first 4 characters and the length).
Prefer --value-stdin so the secret stays out of your shell history.
Secret ids come from the stack outputs (ReadApiKeySecretArn, SlackTokenSecretArn,
SigningSecretsSecretArn) unless --secret-id is given.

Rotating the signing secret (spec §5.5): create a new webhook with the service, \`signing add\` its
secret, delete the old webhook, then \`signing remove\` the old secret. The last secret is never removed.
${STACK_FLAGS}`,
};

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
