/**
 * What a local stack keeps in its data directory across restarts, beside DynamoDB's files: the
 * secrets as the functions last read them, the stack's own keys (buttons and slash commands signed
 * before a restart still verify), the queues' messages (DLQs too), the local Slack's messages (the
 * preview's history) and whether the demo run was sent. One file per concern, JSON, written whole.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { isRecord, parseJsonOrUndefined } from '../../shared/util';
import { describeError } from '../../shared/observability';
import type { QueuesSnapshot } from '../sqs/engine';
import type { SqsServer } from '../sqs-server';
import type { LocalSecrets, LocalSecretValues } from '../local-secrets';
import { LocalStackError, type StackKeys } from './types';

/** The data directory's entries: what `--fresh` removes (the lock stays with the stack holding it). */
export const DATA_DIR_ENTRIES = {
  dynamodb: 'dynamodb',
  secrets: 'secrets.json',
  queues: 'queues.json',
  slack: 'slack.json',
  demoSent: 'demo-sent',
} as const;

const nonEmpty = z.string().min(1);
const keptSecretsSchema = z.object({
  /** The webhook signing secrets, newest first. */
  signing: z.array(nonEmpty).min(1),
  /** Absent when the read API or Slack is the real one: their credentials are never written down. */
  readApiKey: z.string().optional().catch(undefined),
  slackToken: z.string().optional().catch(undefined),
  keys: z.object({ actionSigningKey: z.string(), slackSigningSecret: z.string() }),
});

type KeptSecrets = z.infer<typeof keptSecretsSchema>;

/** Restores the queues' messages from the data directory, and writes the stack's state there (at start and on close). */
export function keeper(
  dataDir: string,
  parts: { sqs: SqsServer; localSecrets: LocalSecrets | undefined; keys: StackKeys; real: { readApi: boolean; slack: boolean } },
): { restore(): void; save(values: LocalSecretValues): void } {
  return {
    restore: () => {
      const queues = readKeptQueues(dataDir);
      if (queues) parts.sqs.restore(queues);
    },
    save: (values) => {
      const live = parts.localSecrets ? liveSecrets(parts.localSecrets, values) : values;
      writeJson(dataPath(dataDir, 'secrets'), {
        signing: [...live.signing],
        ...(parts.real.readApi ? {} : { readApiKey: live.readApiKey }),
        ...(parts.real.slack ? {} : { slackToken: live.slackToken }),
        keys: parts.keys,
      } satisfies KeptSecrets);
      writeJson(dataPath(dataDir, 'queues'), parts.sqs.snapshot());
    },
  };
}

/** The secrets as the functions read them now (`bridge secrets …` may have changed them); `fallback` for any not readable. */
function liveSecrets(localSecrets: LocalSecrets, fallback: LocalSecretValues): LocalSecretValues {
  const current = (id: string): string | undefined => localSecrets.server.currentValue(id);
  const signing = parseJsonOrUndefined(current(localSecrets.signingSecretsSecretId));
  return {
    signing: Array.isArray(signing) && signing.every((s) => typeof s === 'string') ? signing : fallback.signing,
    readApiKey: current(localSecrets.readApiKeySecretId) ?? fallback.readApiKey,
    slackToken: current(localSecrets.slackTokenSecretId) ?? fallback.slackToken,
  };
}

export function dataPath(dataDir: string, entry: keyof typeof DATA_DIR_ENTRIES): string {
  return join(dataDir, DATA_DIR_ENTRIES[entry]);
}

/** Removes every kept entry (`npm start -- --fresh`). */
export function clearDataDir(dataDir: string): void {
  for (const entry of Object.values(DATA_DIR_ENTRIES)) rmSync(join(dataDir, entry), { recursive: true, force: true });
}

export function readKeptSecrets(dataDir: string): KeptSecrets | undefined {
  const kept = readJson(dataPath(dataDir, 'secrets'));
  if (kept === undefined) return undefined;
  const parsed = keptSecretsSchema.safeParse(kept);
  if (!parsed.success) throw unusable(dataPath(dataDir, 'secrets'), 'it is not the secrets a local stack keeps');
  return parsed.data;
}

function readKeptQueues(dataDir: string): QueuesSnapshot | undefined {
  const kept = readJson(dataPath(dataDir, 'queues'));
  if (kept === undefined) return undefined;
  if (!isRecord(kept) || !Object.values(kept).every(Array.isArray)) throw unusable(dataPath(dataDir, 'queues'), 'it is no queue snapshot');
  return kept as QueuesSnapshot;
}

export function demoSent(dataDir: string): boolean {
  return existsSync(dataPath(dataDir, 'demoSent'));
}

export function markDemoSent(dataDir: string): void {
  writeFileSync(dataPath(dataDir, 'demoSent'), `${new Date().toISOString()}\n`);
}

function readJson(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // nothing kept yet
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw unusable(file, describeError(error).errorMessage);
  }
}

/** Written aside and renamed, so a stop half-way never leaves half a file. Only this user may read the secrets. */
export function writeJson(file: string, value: unknown, indent?: number): void {
  const temporary = `${file}.${process.pid}.tmp`;
  try {
    writeFileSync(temporary, `${JSON.stringify(value, null, indent)}\n`, { mode: 0o600 });
    renameSync(temporary, file);
  } finally {
    rmSync(temporary, { force: true });
  }
}

function unusable(file: string, why: string): LocalStackError {
  return new LocalStackError(`cannot use ${file} (${why}); start with --fresh to begin again without it`);
}
