// Every `npx bridge …` command shown in README.md and docs/*.md, run as written (placeholders filled
// in) through the CLI's entry (`run`, what the bin calls), in the order the docs show them:
// - without --stack, against a local stack started here (its ready file, as `npm start` writes it);
// - with --stack VisibilitySlackBridge-<stage>, against a stand-in of the deployed stack: the local
//   CloudFormation server answers DescribeStacks with outputs that point at the same local peers, and
//   every other AWS endpoint points at a closed port, so nothing can reach AWS.
// A command that fails as written (usage error, unknown command or option, a failed check) fails
// with its file, line and command. What the docs say a command prints (`$ npx bridge …` in a
// ```console block, its output below it) is what it prints, failures included: with no local stack
// (a `# with no local stack` comment), a mistyped flag, an unknown help topic.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';
import { LocalCloudFormationServer } from '../../local/cloudformation-server';
import { LOCAL_SLACK_TOKEN } from '../../local/ready-info';
import { LOCAL_SLACK_APP_ID, LOCAL_SLACK_TEAM_ID } from '../../local/slack-app-delivery';
import type { LocalStack } from '../../local/stack';
import { STACK_OUTPUTS, stackNameFor } from '../../shared/contracts';
import { docCommands, docFiles, shellWords, type DocCommand } from '../support/doc-commands';
import { startTestStack } from './helpers';

const ROOT = resolve(import.meta.dirname, '../..');
/** The gallery, so the docs' `--project gallery-big-drop` names a project of the simulator. */
const GALLERY = join(ROOT, 'local/simulator/fixtures/gallery.json');
/** The comment of a documented console command that runs with no local stack. */
const NO_LOCAL_STACK = 'with no local stack';
/** How the docs name the default ready file in output. */
const DEFAULT_READY_SHOWN = '.local/ready.json';
const STAGE = 'docs';
const STACK_NAME = stackNameFor(STAGE);
const CLI_TIMEOUT_MS = 90_000;

/** Commands that read a secret from stdin, and the value piped in: the local stack's own, so it keeps working. */
const STDIN: Record<string, (stack: LocalStack) => string> = {
  'secrets set read-api-key': (stack) => stack.apiKey,
  'secrets set slack-token': () => LOCAL_SLACK_TOKEN,
  'secrets set slack-signing-secret': (stack) => stack.slackSigningSecret,
  'secrets signing add': (stack) => stack.secrets[0] ?? '',
  // The documented connection commands run in their order: add, rotate (a new secret), rotate --finish, remove.
  'connections add': (stack) => `${stack.apiKey}\nwhsec_docs_connection`,
  'connections rotate': () => 'whsec_docs_rotated',
};

/** Long-running commands: interrupted (as by Ctrl-C) after this many milliseconds. */
const LONG_RUNNING: Record<string, number> = { tail: 1_500 };

/** With --stack, these read an AWS service that has no local stand-in here (CloudWatch Logs): run with --help. */
const HELP_ONLY_WITH_STACK = new Set(['tail']);

/**
 * Commands whose documented outcome here is "nothing matched" (exit 1, never the usage error's 2),
 * keyed by the text as documented, with why.
 */
const EXIT_1_HERE: Record<string, string> = {
  'dlq cancel': 'no message move task is running to cancel',
  'dlq replay --older-than 1h --dry-run': 'nothing in the DLQ is an hour old',
  'dlq replay --connection acme-seo': 'the local stack has no connection acme-seo, so none of its messages is in the DLQ',
};

/** Mentions of the tool or of a family of commands (`npx bridge …`, `npx bridge secrets …`), not commands. */
function isReference(text: string): boolean {
  return text === '' || text.includes('…');
}

/** A command the docs show with what it prints: `$ npx bridge …` in a console block, then its output lines. */
interface DocumentedOutput extends DocCommand {
  /** The command's comment (`# with no local stack`), or ''. */
  comment: string;
  lines: string[];
}

/** `file:line` of each line the docs show as a command's output (not a command to run, even when it names one). */
const OUTPUT_LINES = new Set<string>();

function documentedOutputs(files: readonly { file: string; text: string }[]): DocumentedOutput[] {
  const found: DocumentedOutput[] = [];
  for (const { file, text } of files) {
    let inConsole = false;
    text.split(/\r?\n/).forEach((line, index) => {
      if (/^\s{0,3}```/.test(line)) {
        inConsole = !inConsole && /^\s{0,3}```console\s*$/.test(line);
        return;
      }
      if (!inConsole) return;
      const command = /^\$ npx bridge(?:\s+(.*))?$/.exec(line);
      if (command !== null) {
        const [text = '', comment = ''] = (command[1] ?? '').split(/\s+#\s*/);
        found.push({ file, line: index + 1, text: text.trim(), comment: comment.trim(), lines: [] });
      } else {
        found.at(-1)?.lines.push(line);
        OUTPUT_LINES.add(`${file}:${index + 1}`);
      }
    });
  }
  return found;
}

const outputs = documentedOutputs(docFiles(ROOT));
const documented = docCommands(docFiles(ROOT)).filter((c) => !OUTPUT_LINES.has(`${c.file}:${c.line}`));
const runnable = firstOfEach(documented.filter((c) => !isReference(c.text)));
/** Commands whose documented output is an error: they exit non-zero as written. */
/** Whether a documented output is an error: the command exits non-zero then. */
function failsAsDocumented(o: DocumentedOutput): boolean {
  return o.lines.some((line) => line.startsWith('error:'));
}
/** Commands that fail as written, next to the local stack too (the runnable check expects it). */
const FAILING_AS_DOCUMENTED = new Set(outputs.filter((o) => o.comment !== NO_LOCAL_STACK && failsAsDocumented(o)).map((o) => o.text));

/** Each command once, at its first place in the docs (later copies say the same). */
function firstOfEach(commands: readonly DocCommand[]): DocCommand[] {
  const seen = new Set<string>();
  return commands.filter((c) => !seen.has(c.text) && seen.add(c.text));
}

let stack: LocalStack;
let cloudFormation: LocalCloudFormationServer;
let dir: string;
let readyFile: string;
let env: Record<string, string>;

beforeAll(async () => {
  // Two clients, for the docs' `--connection client-a` commands (npm start -- --connections 2).
  stack = await startTestStack({ secretsManagerPort: 0, eventsPort: 0, fixture: GALLERY, connections: 2 });
  const secrets = stack.secretsManager;
  if (secrets === undefined) throw new Error('the local stack runs without its Secrets Manager server');
  dir = mkdtempSync(join(tmpdir(), 'bridge-docs-'));
  readyFile = join(dir, 'ready.json');
  const ready = stack.readyInfo();
  writeFileSync(readyFile, JSON.stringify(ready));
  const slackSigningSecretArn = secrets.server.createSecret(`visibility-bridge/${STAGE}/slack-signing-secret`, stack.slackSigningSecret);
  cloudFormation = await LocalCloudFormationServer.start([
    {
      name: STACK_NAME,
      outputs: {
        [STACK_OUTPUTS.webhookUrl]: stack.webhookUrl,
        [STACK_OUTPUTS.queueUrl]: stack.sqs.queueUrl,
        [STACK_OUTPUTS.dlqUrl]: stack.sqs.dlqUrl,
        [STACK_OUTPUTS.tableName]: stack.dynamo.tableName,
        [STACK_OUTPUTS.readApiKeySecretArn]: secrets.readApiKeySecretId,
        [STACK_OUTPUTS.slackTokenSecretArn]: secrets.slackTokenSecretId,
        [STACK_OUTPUTS.signingSecretsSecretArn]: secrets.signingSecretsSecretId,
        [STACK_OUTPUTS.slackSigningSecretSecretArn]: slackSigningSecretArn,
        [STACK_OUTPUTS.readApiBaseUrl]: stack.simulatorUrl,
        [STACK_OUTPUTS.slackDefaultChannel]: stack.slackChannel,
        [STACK_OUTPUTS.slackProjectChannels]: '{}',
        [STACK_OUTPUTS.apiBaseUrl]: ready.apiBaseUrl,
        [STACK_OUTPUTS.ingestFunctionName]: `${STACK_NAME}-Ingest`,
        [STACK_OUTPUTS.digestFunctionName]: `${STACK_NAME}-Digest`,
        // As a stage file naming the local Slack's workspace and app leaves them.
        [STACK_OUTPUTS.slackTeamIds]: LOCAL_SLACK_TEAM_ID,
        [STACK_OUTPUTS.slackAppId]: LOCAL_SLACK_APP_ID,
      },
    },
  ]);
  const closed = await closedPortUrl();
  env = {
    NO_COLOR: '1',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_CLOUDFORMATION: cloudFormation.url,
    AWS_ENDPOINT_URL_SQS: stack.sqs.endpoint,
    AWS_ENDPOINT_URL_DYNAMODB: stack.dynamo.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.server.url,
    // Any service without a stand-in, and the generic endpoint, go nowhere rather than to AWS.
    AWS_ENDPOINT_URL_CLOUDWATCH_LOGS: closed,
    AWS_ENDPOINT_URL: closed,
    ...(ready.slackApiUrl !== null ? { SLACK_API_URL: ready.slackApiUrl } : {}),
  };
}, 90_000);

afterAll(async () => {
  await Promise.all([stack?.close(), cloudFormation?.close()]);
  if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
});

/** A loopback URL nothing listens on. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no TCP address');
  return `http://127.0.0.1:${address.port}`;
}

/** The placeholders of the docs, filled in with this test's values; any other `<…>` is an error. */
function substitute(text: string): string {
  const filled = text.replaceAll('<stage>', STAGE).replaceAll('<project>', stack.projectIds[0] ?? '');
  const unknown = /<[^<>\s]+>/.exec(filled);
  if (unknown !== null) throw new Error(`unknown placeholder ${unknown[0]}: add it to substitute() in test/e2e/docs-commands.test.ts`);
  return filled;
}

/** The first entry of `table` whose key is the leading words of the command. */
function lookup<T>(table: Record<string, T>, argv: readonly string[]): T | undefined {
  const key = Object.keys(table).find((words) => words.split(' ').every((word, i) => argv[i] === word));
  return key === undefined ? undefined : table[key];
}

interface Ran {
  argv: string[];
  code: number;
  io: BufferedIo;
}

async function runDocumented(command: DocCommand, ready: string = readyFile): Promise<Ran> {
  let argv = shellWords(substitute(command.text));
  if (argv.includes('--stack') && HELP_ONLY_WITH_STACK.has(argv[0] ?? '')) argv = [...argv, '--help'];
  const stdin = lookup(STDIN, argv);
  const interruptAfter = lookup(LONG_RUNNING, argv);
  const io = bufferIo({
    env,
    defaultReadyFile: ready,
    pollIntervalMs: 200,
    ...(stdin !== undefined ? { stdinText: `${stdin(stack)}\n` } : {}),
    ...(interruptAfter !== undefined
      ? {
          onInterrupt: (handler: () => void) => {
            const timer = setTimeout(handler, interruptAfter);
            return () => clearTimeout(timer);
          },
        }
      : {}),
  });
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<number>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish within ${CLI_TIMEOUT_MS / 1000} s`)), CLI_TIMEOUT_MS);
  });
  try {
    return { argv, code: await Promise.race([run(argv, io), timedOut]), io };
  } finally {
    clearTimeout(timer);
  }
}

function describeFailure(command: DocCommand, ran: Ran): string {
  return [
    `${command.file}:${command.line}: \`npx bridge ${command.text}\` exits ${ran.code} as written`,
    `  ran: npx bridge ${ran.argv.join(' ')}`,
    ...`${ran.io.stdout.text()}\n${ran.io.stderr.text()}`
      .trim()
      .split('\n')
      .slice(0, 20)
      .map((line) => `  ${line}`),
  ].join('\n');
}

describe('the docs show npx bridge commands', () => {
  it('in README.md and docs/*.md, both in code blocks and inline', () => {
    const files = new Set(runnable.map((c) => c.file));
    expect(files).toContain('README.md');
    expect(files).toContain('docs/DEPLOY.md');
    expect(runnable.length).toBeGreaterThan(20);
  });
});

describe('every documented npx bridge command works as written', { timeout: CLI_TIMEOUT_MS + 10_000 }, () => {
  it.each(runnable.map((c) => [`${c.file}:${c.line} npx bridge ${c.text}`, c] as const))('%s', async (_name, command) => {
    const ran = await runDocumented(command);
    if (FAILING_AS_DOCUMENTED.has(command.text)) expect(ran.code, describeFailure(command, ran)).not.toBe(0);
    else expect(ran.code, describeFailure(command, ran)).toBe(command.text in EXIT_1_HERE ? 1 : 0);
  });

  it('fails a command that does not run as written, naming the file, the line and the command', async () => {
    const wrong: DocCommand = { file: 'README.md', line: 7, text: 'dlq stats --stack VisibilitySlackBridge-<stage> --verbose' };
    const ran = await runDocumented(wrong);
    expect(ran.code).toBe(2);
    const message = describeFailure(wrong, ran);
    expect(message).toContain('README.md:7: `npx bridge dlq stats --stack VisibilitySlackBridge-<stage> --verbose` exits 2 as written');
    expect(message).toContain('unknown option --verbose');
  });
});

describe('every documented output is what the command prints', { timeout: CLI_TIMEOUT_MS + 10_000 }, () => {
  it('the docs show some, failures included', () => {
    expect(outputs.map((o) => o.text)).toEqual(expect.arrayContaining(['dlq stats', '--verison', 'help nonsense']));
    expect(outputs.some((o) => o.comment === NO_LOCAL_STACK)).toBe(true);
  });

  it.each(outputs.map((o) => [`${o.file}:${o.line} npx bridge ${o.text}`, o] as const))('%s', async (_name, documentedOutput) => {
    // No local stack: a ready file that is not there, shown as the default one is.
    const absent = join(dir, 'absent', 'ready.json');
    const ran = await runDocumented(documentedOutput, documentedOutput.comment === NO_LOCAL_STACK ? absent : readyFile);
    const printed = `${ran.io.stdout.text()}${ran.io.stderr.text()}`.replaceAll(absent, DEFAULT_READY_SHOWN).trimEnd().split('\n');
    expect(printed, describeFailure(documentedOutput, ran)).toEqual(documentedOutput.lines);
    expect(ran.code !== 0, describeFailure(documentedOutput, ran)).toBe(failsAsDocumented(documentedOutput));
  });
});
