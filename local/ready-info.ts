/**
 * The ready file `npm start` writes once everything listens (and removes on exit): the one
 * declaration of its shape, written by local/start.ts and read by the `bridge` CLI (cli/ready-file.ts).
 * Kept free of imports so the CLI can load it without starting anything.
 */
import { fileURLToPath } from 'node:url';

/** `.local/ready.json` at the project root, where `npm start` writes it unless --ready-file says otherwise. */
export const DEFAULT_READY_FILE = fileURLToPath(new URL('../.local/ready.json', import.meta.url));

/** The bot token the local stack's Slack server accepts. */
export const LOCAL_SLACK_TOKEN = 'xoxb-local-bridge-token';

/** The ports the local stack's listeners took (0 asked for any free one; these are the real ones). */
export interface ReadyPorts {
  webhook: number;
  simulator: number | null;
  sqs: number;
  dynamodb: number;
  /** Null until the local stack runs the Secrets Manager server. */
  secretsManager: number | null;
  slack: number | null;
  /** Null until the local stack serves its event stream. */
  events: number | null;
}

/** A client of `npm start -- --connections N`: one service workspace (its own simulator) and its Slack workspace. */
export interface ReadyConnection {
  /** The connection id (`client-a`…): `npx bridge … --connection <id>`. */
  id: string;
  /** Its own webhook, `<webhookUrl>/<id>`. */
  webhookUrl: string;
  /** Its webhook's signing secrets (the first is the one its simulator signs with). */
  secrets: string[];
  /** Its simulator: the connection's read-API base URL. */
  simulatorUrl: string;
  apiKey: string;
  projectIds: string[];
  /** The Slack workspace it is linked to, where the app was installed through "Add to Slack". */
  slackTeamId: string;
  slackTeamName: string;
  /** Its default channel, in that workspace. */
  slackChannel: string;
}

export interface ReadyInfo {
  webhookUrl: string;
  secrets: string[];
  /** Base URL of the read API in use: the simulator's, or the real service's. */
  simulatorUrl: string;
  apiKey: string;
  projectIds: string[];
  webhookId: string | null;
  sqsEndpoint: string;
  queueUrl: string;
  dlqUrl: string;
  /** Deferred slash commands' own queue and its DLQ (absent from a ready file an older `npm start` wrote). */
  commandsQueueUrl?: string;
  commandsDlqUrl?: string;
  dynamoEndpoint: string;
  tableName: string;
  /** The local Secrets Manager server, and the secret ids the functions read. */
  secretsManagerEndpoint: string | null;
  signingSecretsSecretId: string | null;
  readApiKeySecretId: string | null;
  slackTokenSecretId: string | null;
  /** The local stack's live event stream (NDJSON, `bridge tail`). */
  eventsUrl: string | null;
  /** The local Slack server's Web API URL; null when posting to a real Slack. */
  slackApiUrl: string | null;
  slackChannel: string;
  /** The Slack app's signing secret the local Slack endpoints verify with (`bridge slack command` signs with it). */
  slackSigningSecret: string;
  /** The local API's base URL (webhook and Slack endpoints). */
  apiBaseUrl: string;
  /** The browser preview of what was posted to the local Slack server; null with a real Slack. */
  previewUrl: string | null;
  region: string;
  pid: number;
  ports: ReadyPorts;
  /** `npm start -- --connections N`'s clients (empty without; absent from a ready file an older `npm start` wrote). */
  connections?: ReadyConnection[];
  /** The preview's page of the local Slack workspaces with "Add to Slack"; null without --connections. */
  workspacesUrl?: string | null;
}
