// The CLI's entry: help for every command, usage errors (exit 2), error messages without stack
// traces, the stack-output lookup (DescribeStacks injected: CloudFormation has no local peer) and
// one spawn of the real bin shim.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CloudFormationServiceException } from '@aws-sdk/client-cloudformation';
import { run } from '../../cli/main';
import { bufferIo } from '../../cli/io';
import { clientConfig, StackOutputs, type AwsSettings, type StackInfo } from '../../cli/aws';
import { explainError } from '../../cli/errors';
import { parseDuration } from '../../shared/duration';

const root = fileURLToPath(new URL('../..', import.meta.url));

describe('help and usage', () => {
  it.each([
    [['--help'], 'bridge — operate'],
    [['help'], 'bridge — operate'],
    [['dlq', '--help'], 'bridge dlq stats'],
    [['dlq', 'stats', '--help'], 'Usage: npx bridge dlq stats'],
    [['dlq', 'peek', '-h'], 'Usage: npx bridge dlq peek'],
    [['dlq', 'replay', '--help'], 'Usage: npx bridge dlq replay'],
    [['help', 'dlq', 'replay'], 'Usage: npx bridge dlq replay'],
    [['send', '--help'], 'Usage: npx bridge send run.completed|draft.ready'],
    [['doctor', '--help'], 'Usage: npx bridge doctor'],
    [['smoke', '--help'], 'Usage: npx bridge smoke --stack NAME [--project ID] [--timeout DURATION]'],
    [['secrets', 'set', '--help'], 'stdin is a terminal'],
    [['secrets', '--help'], 'npx bridge secrets set read-api-key|slack-token|slack-signing-secret'],
    [['secrets', 'signing', 'add', '--help'], 'npx bridge secrets signing add'],
  ])('%j prints its help and exits 0', async (argv, expected) => {
    const io = bufferIo();
    expect(await run(argv, io)).toBe(0);
    expect(io.stdout.text()).toContain(expected);
  });

  it('no arguments prints help on stderr and exits 2', async () => {
    const io = bufferIo();
    expect(await run([], io)).toBe(2);
    expect(io.stderr.text()).toContain('Usage:');
    expect(io.stdout.text()).toBe('');
  });

  it('an unknown command or option exits 2 with a pointer to --help', async () => {
    const io = bufferIo();
    expect(await run(['frobnicate'], io)).toBe(2);
    expect(io.stderr.text()).toContain('error: unknown command "frobnicate"');
    const opt = bufferIo();
    expect(await run(['doctor', '--colour'], opt)).toBe(2);
    expect(opt.stderr.text()).toBe('error: unknown option --colour\nrun `npx bridge doctor --help` for usage\n');
  });

  it('suggests the nearest command, sub-command, option and event type', async () => {
    const cases: [string[], string][] = [
      [['dlqq'], 'unknown command "dlqq" (did you mean dlq?)'],
      [['dlq', 'peeek'], 'unknown dlq subcommand "peeek" (did you mean peek?)'],
      [['dlq', 'peek', '--maxx', '3'], 'unknown option --maxx (did you mean --max?)'],
      [['dlq', 'replay', '--type', 'run.finished'], '--type must be one of run.completed, draft.ready, got "run.finished"'],
      [['send', 'run.complete'], 'unknown event type "run.complete": use one of run.completed, draft.ready (did you mean run.completed?)'],
      [['send', 'draft.ready', '--version', 'abc'], '--version must be a whole number, got "abc"'],
    ];
    for (const [argv, message] of cases) {
      const io = bufferIo();
      expect(await run(argv, io)).toBe(2);
      expect(io.stderr.text()).toContain(`error: ${message}\n`);
    }
  });

  it('--version prints the package version; a mistyped flag of the program gets a suggestion', async () => {
    const io = bufferIo();
    expect(await run(['--version'], io)).toBe(0);
    expect(io.stdout.text()).toMatch(/^\d+\.\d+\.\d+\n$/);
    const typo = bufferIo();
    expect(await run(['--verison'], typo)).toBe(2);
    expect(typo.stderr.text()).toBe('error: unknown option --verison (did you mean --version?)\nrun `npx bridge --help` for usage\n');
  });

  it('help of an unknown topic exits 1 naming it, with a suggestion; help environment says the shared options once', async () => {
    const nonsense = bufferIo();
    expect(await run(['help', 'nonsense'], nonsense)).toBe(1);
    expect(nonsense.stdout.text()).toBe('');
    expect(nonsense.stderr.text()).toContain('error: unknown help topic "nonsense"\n');
    const near = bufferIo();
    expect(await run(['help', 'dlq', 'replya'], near)).toBe(1);
    expect(near.stderr.text()).toContain('error: unknown help topic "dlq replya" (did you mean replay?)\n');
    const environment = bufferIo();
    expect(await run(['help', 'environment'], environment)).toBe(0);
    for (const flag of ['--stack', '--region', '--local', '--endpoint-sqs', '--endpoint-logs', 'BRIDGE_STACK', 'AWS_REGION'])
      expect(environment.stdout.text()).toContain(flag);
    // A command's own help points there instead of repeating the block.
    const stats = bufferIo();
    expect(await run(['dlq', 'stats', '--help'], stats)).toBe(0);
    expect(stats.stdout.text()).not.toContain('--endpoint-sqs');
    expect(stats.stdout.text()).toContain('`npx bridge help environment`');
  });

  it('completion prints a script for bash, zsh and fish; other shells are a usage error', async () => {
    for (const shell of ['bash', 'zsh', 'fish']) {
      const io = bufferIo({ env: { PATH: '' } });
      expect(await run(['completion', shell], io), shell).toBe(0);
      expect(io.stdout.text(), shell).toContain(`npx bridge completion ${shell} > `);
    }
    const bad = bufferIo();
    expect(await run(['completion', 'tcsh'], bad)).toBe(2);
    expect(bad.stderr.text()).toContain('completion needs a shell: bash, zsh, fish; got "tcsh"');
  });

  it('--json usage errors are one JSON document on stdout', async () => {
    const io = bufferIo();
    expect(await run(['send', 'nope', '--json'], io)).toBe(2);
    expect(JSON.parse(io.stdout.text())).toEqual({
      ok: false,
      error: { code: 'usage', message: 'unknown event type "nope": use one of run.completed, draft.ready' },
    });
  });

  it("durations, the one parser the CLI shares with Slack's mute", () => {
    const ms = (text: string) => parseDuration(text)?.ms;
    expect(ms('90s')).toBe(90_000);
    expect(ms('30m')).toBe(1_800_000);
    expect(ms('2h')).toBe(7_200_000);
    expect(ms('12h')).toBe(43_200_000);
    expect(ms('1d')).toBe(86_400_000);
    expect(ms('7 days')).toBe(604_800_000);
    expect(ms('1 week')).toBe(604_800_000);
    expect(ms('2 weeks')).toBe(1_209_600_000);
    expect(ms('1.5h')).toBe(5_400_000);
    expect(ms('10')).toBeUndefined();
    expect(ms('7 fortnights')).toBeUndefined();
  });
});

describe('stack outputs lookup (DescribeStacks injected)', () => {
  const settings: AwsSettings = { region: 'eu-west-1', endpoints: {}, env: {} };

  it('describes the stack once and reads outputs', async () => {
    const calls: string[] = [];
    const stack = new StackOutputs('VisibilitySlackBridge-prod', settings, (name) => {
      calls.push(name);
      return Promise.resolve({ name, status: 'CREATE_COMPLETE', outputs: { QueueUrl: 'https://sqs/q', DlqUrl: ' https://sqs/d ' } });
    });
    expect(await stack.require('QueueUrl')).toBe('https://sqs/q');
    expect(await stack.require('DlqUrl')).toBe('https://sqs/d');
    expect(await stack.optional('TableName')).toBeUndefined();
    await expect(stack.require('TableName', '--table')).rejects.toMatchObject({
      message: 'stack VisibilitySlackBridge-prod has no output TableName',
      code: 'missing_output',
    });
    expect(calls).toEqual(['VisibilitySlackBridge-prod']);
  });

  it('a missing stack (CloudFormation ValidationError) names the stack and region', async () => {
    const stack = new StackOutputs('VisibilitySlackBridge-prod', settings, (name) =>
      Promise.reject(
        new CloudFormationServiceException({
          name: 'ValidationError',
          $fault: 'client',
          $metadata: {},
          message: `Stack with id ${name} does not exist`,
        }),
      ),
    );
    await expect(stack.load()).rejects.toMatchObject({
      code: 'stack_not_found',
      message: 'stack VisibilitySlackBridge-prod does not exist in region eu-west-1',
    });
  });

  it('no credentials is said plainly, through the whole CLI', async () => {
    const noCredentials = (): Promise<StackInfo> => {
      const error = new Error('Could not load credentials from any providers');
      error.name = 'CredentialsProviderError';
      return Promise.reject(error);
    };
    const io = bufferIo({ describeStack: noCredentials, env: { BRIDGE_STACK: 'VisibilitySlackBridge-prod' } });
    expect(await run(['dlq', 'stats'], io)).toBe(1);
    expect(io.stderr.text()).toContain('error: no AWS credentials: set AWS_PROFILE or');
    expect(io.stderr.text()).not.toMatch(/\n\s+at /);
    const json = bufferIo({ describeStack: noCredentials });
    expect(await run(['doctor', '--json', '--stack', 'VisibilitySlackBridge-prod'], json)).toBe(1);
    const doc = JSON.parse(json.stdout.text()) as { checks: { id: string; status: string; detail: string }[] };
    expect(doc.checks[0]).toMatchObject({ id: 'stack', status: 'fail', detail: expect.stringContaining('no AWS credentials') as unknown });
  });
});

describe('which stack a command uses', () => {
  const stackOf =
    (asked: string[]) =>
    (name: string): Promise<StackInfo> => {
      asked.push(name);
      return Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: {} });
    };

  it.each([
    [['trigger', 'run.completed']],
    [['smoke']],
    [['dlq', 'stats']],
    [['dlq', 'peek']],
    [['dlq', 'replay']],
    [['dlq', 'cancel']],
    [['doctor']],
    [['tail']],
    [['secrets', 'signing', 'list']],
    [['subscriptions', 'list']],
    [['subscriptions', 'add', '--project', 'p', '--channel', 'C0123ABCD']],
    [['subscriptions', 'remove', '--project', 'p', '--channel', 'C0123ABCD']],
    [['slack', 'manifest']],
    [['slack', 'command', '/visibility help', '--channel', 'C1']],
    [['trigger', 'weekly']],
  ])('%j with no local stack and no stack named says so and how to do either (exit 2), reading no stack', async (argv) => {
    const asked: string[] = [];
    const io = bufferIo({ describeStack: stackOf(asked), defaultReadyFile: '/nonexistent/ready.json' });
    expect(await run(argv, io)).toBe(2);
    expect(io.stderr.text()).toContain(
      'error: no local stack running (no /nonexistent/ready.json) and no deployed stack named: start `npm start` in this directory (the local stack), or name a deployed stack with --stack NAME (or BRIDGE_STACK) and set AWS_REGION\n',
    );
    expect(io.stderr.text()).toMatch(/run `npx bridge [a-z ]+ --help` for usage/);
    expect(io.stderr.text()).not.toContain('using stack');
    expect(asked).toEqual([]);
  });

  it('a ready file left by an `npm start` that no longer runs is named as such', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'bridge-stale-'));
    const readyFile = join(dir, 'ready.json');
    // A pid no process has (beyond the kernel's pid_max).
    writeFileSync(readyFile, JSON.stringify({ webhookUrl: 'http://127.0.0.1:1/webhook', secrets: ['s'], pid: 2 ** 30 }));
    try {
      const io = bufferIo({ defaultReadyFile: readyFile });
      expect(await run(['dlq', 'stats'], io)).toBe(2);
      expect(io.stderr.text()).toContain(
        `no local stack running (${readyFile} is left from an \`npm start\` that no longer runs (pid ${2 ** 30}))`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('--stack and BRIDGE_STACK name the stack, and the command says which it uses', async () => {
    const asked: string[] = [];
    const env = bufferIo({ describeStack: stackOf(asked), env: { BRIDGE_STACK: 'VisibilitySlackBridge-staging' } });
    await run(['dlq', 'replay', '--dry-run'], env);
    expect(env.stderr.text()).toContain('using stack VisibilitySlackBridge-staging (BRIDGE_STACK)');
    const flag = bufferIo({ describeStack: stackOf(asked), env: { BRIDGE_STACK: 'VisibilitySlackBridge-staging' } });
    await run(['trigger', 'run.completed', '--stack', 'VisibilitySlackBridge-dev'], flag);
    expect(flag.stderr.text()).toContain('using stack VisibilitySlackBridge-dev (--stack)');
    // The missing output's message names the stack it read.
    expect(flag.stderr.text()).toContain('stack VisibilitySlackBridge-dev has no output WebhookUrl');
    expect(asked).toEqual(['VisibilitySlackBridge-staging', 'VisibilitySlackBridge-dev']);
  });
});

describe('error explanations', () => {
  it('maps SDK and network errors to messages with fixes', () => {
    const named = (name: string, message: string): Error => Object.assign(new Error(message), { name });
    expect(explainError(named('Error', 'Region is missing')).message).toBe('no AWS region: pass --region or set AWS_REGION');
    expect(explainError(named('QueueDoesNotExist', 'The specified queue does not exist.'), { resource: 'https://q' }).code).toBe(
      'queue_not_found',
    );
    expect(
      explainError(named('UnrecognizedClientException', 'The security token included in the request is invalid'), {
        service: 'SQS',
        region: 'ap-east-1',
      }).message,
    ).toBe('SQS in ap-east-1 rejected the credentials (UnrecognizedClientException)');
    expect(
      explainError(named('AccessDeniedException', 'User is not authorized to perform sqs:ReceiveMessage'), { service: 'SQS' }).code,
    ).toBe('access_denied');
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    expect(explainError(refused, { service: 'DynamoDB', endpoint: 'http://127.0.0.1:9' }).message).toBe(
      'cannot reach DynamoDB at http://127.0.0.1:9 (ECONNREFUSED)',
    );
    expect(
      explainError(new TypeError('fetch failed', { cause: Object.assign(new Error('getaddrinfo ENOTFOUND x'), { code: 'ENOTFOUND' }) }))
        .code,
    ).toBe('unreachable');
  });

  it('loopback endpoints get dummy credentials and a region; others use the default chain', () => {
    const local = clientConfig({ region: undefined, endpoints: { sqs: 'http://127.0.0.1:4566' }, env: {} }, 'sqs');
    expect(local).toMatchObject({ region: 'us-east-1', endpoint: 'http://127.0.0.1:4566', credentials: { accessKeyId: 'local' } });
    const remote = clientConfig({ region: 'eu-west-1', endpoints: {}, env: { AWS_ENDPOINT_URL_SQS: 'https://sqs.example.com' } }, 'sqs');
    expect(remote).toMatchObject({ region: 'eu-west-1', endpoint: 'https://sqs.example.com' });
    expect(remote.credentials).toBeUndefined();
    expect(() => clientConfig({ region: undefined, endpoints: { sqs: 'not a url' }, env: {} }, 'sqs')).toThrow(/not an http\(s\) URL/);
  });
});

describe('the bin shim', () => {
  it('node cli/bridge.mjs --help works', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['cli/bridge.mjs', '--help'], { cwd: root, timeout: 30_000 });
    expect(stdout).toContain('bridge — operate the visibility webhook → Slack bridge');
  });

  it('exits 2 on a usage error', async () => {
    const error = await promisify(execFile)(process.execPath, ['cli/bridge.mjs', 'dlq', 'nope'], { cwd: root, timeout: 30_000 }).then(
      () => undefined,
      (err: unknown) => err as { code: number; stderr: string },
    );
    expect(error?.code).toBe(2);
    expect(error?.stderr).toContain('unknown dlq subcommand "nope"');
  });
});
