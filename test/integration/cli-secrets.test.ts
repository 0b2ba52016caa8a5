// `bridge secrets …` against the local Secrets Manager server (AWS JSON 1.1, the real SDK client),
// and the server itself.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CreateSecretCommand,
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  ResourceExistsException,
  ResourceNotFoundException,
  type SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { LocalSecretsManagerServer, createSecretsManagerClient } from '../../local/secrets-manager-server';
import { run } from '../../cli/main';
import { bufferIo, type BufferedIo } from '../../cli/io';
import type { StackInfo } from '../../cli/aws';

let server: LocalSecretsManagerServer;
let sm: SecretsManagerClient;
let counter = 0;

beforeAll(async () => {
  server = await LocalSecretsManagerServer.start();
  sm = createSecretsManagerClient(server.url);
});

afterAll(async () => {
  sm.destroy();
  await server.close();
});

function fresh(value: string | undefined = 'PLACEHOLDER'): string {
  counter += 1;
  return server.createSecret(`bridge/test-${counter}`, value);
}

function io(options: Parameters<typeof bufferIo>[0] = {}): BufferedIo {
  return bufferIo(options);
}

function sm_(id: string): string[] {
  return ['--endpoint-secretsmanager', server.url, '--secret-id', id];
}

describe('local Secrets Manager server', () => {
  it('speaks the protocol the SDK expects', async () => {
    const created = await sm.send(new CreateSecretCommand({ Name: 'proto/one', SecretString: 'v1' }));
    expect(created.ARN).toMatch(/^arn:aws:secretsmanager:us-east-1:000000000000:secret:proto\/one-[0-9a-f]{6}$/);
    const first = await sm.send(new GetSecretValueCommand({ SecretId: 'proto/one' }));
    expect(first).toMatchObject({ SecretString: 'v1', VersionStages: ['AWSCURRENT'], Name: 'proto/one' });
    expect(first.CreatedDate).toBeInstanceOf(Date);

    const put = await sm.send(new PutSecretValueCommand({ SecretId: created.ARN, SecretString: 'v2' }));
    expect(put.VersionStages).toEqual(['AWSCURRENT']);
    const partialArn = created.ARN!.slice(0, -7);
    expect((await sm.send(new GetSecretValueCommand({ SecretId: partialArn }))).SecretString).toBe('v2');
    expect((await sm.send(new GetSecretValueCommand({ SecretId: 'proto/one', VersionStage: 'AWSPREVIOUS' }))).SecretString).toBe('v1');

    const described = await sm.send(new DescribeSecretCommand({ SecretId: 'proto/one' }));
    expect(Object.values(described.VersionIdsToStages ?? {}).sort()).toEqual([['AWSCURRENT'], ['AWSPREVIOUS']]);

    await expect(sm.send(new GetSecretValueCommand({ SecretId: 'proto/missing' }))).rejects.toBeInstanceOf(ResourceNotFoundException);
    await expect(sm.send(new CreateSecretCommand({ Name: 'proto/one' }))).rejects.toBeInstanceOf(ResourceExistsException);
    await sm.send(new CreateSecretCommand({ Name: 'proto/empty' }));
    await expect(sm.send(new GetSecretValueCommand({ SecretId: 'proto/empty' }))).rejects.toThrow(
      /secret value for staging label: AWSCURRENT/,
    );
  });
});

describe('bridge secrets set', () => {
  it('puts the read-API key, trimmed, never printed', async () => {
    const id = fresh();
    const out = io();
    expect(await run(['secrets', 'set', 'read-api-key', '--value', '  rk_live_abcdef123456  ', ...sm_(id)], out)).toBe(0);
    expect(server.currentValue(id)).toBe('rk_live_abcdef123456');
    expect(out.stdout.text()).toContain('✓ read-API key set');
    expect(out.stdout.text()).toContain('sha256:' + '64d950e8');
    expect(out.stdout.text() + out.stderr.text()).not.toContain('rk_live_abcdef123456');
  });

  it('reads the Slack token from stdin (--value-stdin and --value -)', async () => {
    const id = fresh();
    expect(await run(['secrets', 'set', 'slack-token', '--value-stdin', ...sm_(id)], io({ stdinText: 'xoxb-111-222-abc\n' }))).toBe(0);
    expect(server.currentValue(id)).toBe('xoxb-111-222-abc');

    const out = io({ stdinText: 'xoxp-user-token\n' });
    expect(await run(['secrets', 'set', 'slack-token', '--value', '-', ...sm_(id), '--json'], out)).toBe(0);
    expect(server.currentValue(id)).toBe('xoxp-user-token');
    expect(out.stderr.text()).toContain('xoxb-');
    const doc = JSON.parse(out.stdout.text()) as { secret: string; secretId: string; fingerprint: string };
    expect(doc).toMatchObject({ secret: 'slack-token', secretId: id, fingerprint: 'sha256:12746170' });
  });

  it('takes the secret ARN from the stack outputs', async () => {
    const id = fresh();
    const describeStack = (name: string): Promise<StackInfo> =>
      Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: { ReadApiKeySecretArn: id } });
    expect(
      await run(
        [
          'secrets',
          'set',
          'read-api-key',
          '--value',
          'key-from-stack',
          '--stack',
          'VisibilitySlackBridge-test',
          '--endpoint-secretsmanager',
          server.url,
        ],
        io({ describeStack }),
      ),
    ).toBe(0);
    expect(server.currentValue(id)).toBe('key-from-stack');
  });

  it('takes the stack from BRIDGE_STACK, and says which stack it uses', async () => {
    const id = fresh();
    const asked: string[] = [];
    const describeStack = (name: string): Promise<StackInfo> => {
      asked.push(name);
      return Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: { ReadApiKeySecretArn: id } });
    };
    const out = io({ describeStack, env: { BRIDGE_STACK: 'VisibilitySlackBridge-staging' }, stdinText: 'key-from-env-stack\n' });
    expect(await run(['secrets', 'set', 'read-api-key', '--endpoint-secretsmanager', server.url], out)).toBe(0);
    expect(asked).toEqual(['VisibilitySlackBridge-staging']);
    expect(out.stderr.text()).toContain('using stack VisibilitySlackBridge-staging (BRIDGE_STACK)');
    expect(server.currentValue(id)).toBe('key-from-env-stack');
  });

  it('without --stack, BRIDGE_STACK or a running local stack, changes nothing and says how to pick one (exit 2)', async () => {
    const id = fresh();
    const asked: string[] = [];
    const describeStack = (name: string): Promise<StackInfo> => {
      asked.push(name);
      return Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: { ReadApiKeySecretArn: id, SigningSecretsSecretArn: id } });
    };
    for (const argv of [
      ['secrets', 'set', 'read-api-key'],
      ['secrets', 'set', 'slack-signing-secret'],
      ['secrets', 'signing', 'add'],
      ['secrets', 'signing', 'remove', '--index', '1'],
    ]) {
      const out = io({ describeStack, stdinText: 'never-read-value\n' });
      expect(await run([...argv, '--endpoint-secretsmanager', server.url], out), argv.join(' ')).toBe(2);
      expect(out.stderr.text()).toContain(
        'start `npm start` in this directory (the local stack), or name a deployed stack with --stack NAME',
      );
      expect(out.stderr.text()).toContain(`run \`npx bridge ${argv.slice(0, argv[1] === 'signing' ? 3 : 2).join(' ')} --help\``);
    }
    expect(asked).toEqual([]);
    expect(server.currentValue(id)).toBe('PLACEHOLDER');
  });

  it('reads the value from stdin without any flag (piped), and from a hidden prompt on a terminal', async () => {
    const id = fresh();
    expect(await run(['secrets', 'set', 'read-api-key', ...sm_(id)], io({ stdinText: 'rk_piped_value\n' }))).toBe(0);
    expect(server.currentValue(id)).toBe('rk_piped_value');

    // A terminal: raw mode on while typing (so nothing echoes), backspace edits, Enter ends.
    const rawModes: boolean[] = [];
    const typed = ['rk_typ', 'ed_valuX\u007f', 'e\r', 'ignored after Enter'];
    const stdin = Object.assign(
      (async function* () {
        for (const chunk of typed) {
          await Promise.resolve();
          yield Buffer.from(chunk);
        }
      })(),
      { isTTY: true, setRawMode: (raw: boolean) => rawModes.push(raw) },
    );
    const tty = io({ stdin });
    expect(await run(['secrets', 'set', 'read-api-key', ...sm_(id)], tty)).toBe(0);
    expect(server.currentValue(id)).toBe('rk_typed_value');
    expect(rawModes).toEqual([true, false]);
    expect(tty.stderr.text()).toContain('Paste the read-API key (input hidden, Enter to finish): ');
    expect(tty.stdout.text() + tty.stderr.text()).not.toContain('rk_typed_value');

    // Ctrl-C at the prompt changes nothing.
    const cancelled = io({
      stdin: Object.assign(
        (async function* () {
          await Promise.resolve();
          yield 'abc\u0003';
        })(),
        { isTTY: true },
      ),
    });
    expect(await run(['secrets', 'set', 'read-api-key', ...sm_(id)], cancelled)).toBe(1);
    expect(cancelled.stderr.text()).toContain('cancelled; nothing was changed');
    expect(server.currentValue(id)).toBe('rk_typed_value');
  });

  it('refuses empty values and the placeholder (usage, exit 2)', async () => {
    const id = fresh();
    for (const argv of [
      ['secrets', 'set', 'read-api-key', '--value', '   ', ...sm_(id)],
      ['secrets', 'set', 'read-api-key', '--value', 'PLACEHOLDER', ...sm_(id)],
      ['secrets', 'set', 'read-api-key', ...sm_(id)],
      ['secrets', 'set', 'other', '--value', 'x', ...sm_(id)],
      ['secrets', 'bogus'],
      ['secrets', 'signing', 'rotate'],
      ['secrets', 'signing', 'remove', ...sm_(id)],
      ['secrets', 'signing', 'list', '--value', 'x', ...sm_(id)],
    ]) {
      expect(await run(argv, io()), argv.join(' ')).toBe(2);
    }
    expect(server.currentValue(id)).toBe('PLACEHOLDER');
  });

  it('a missing secret is a clear error', async () => {
    const out = io();
    expect(await run(['secrets', 'set', 'read-api-key', '--value', 'k', ...sm_('bridge/does-not-exist')], out)).toBe(1);
    expect(out.stderr.text()).toContain('Secrets Manager: bridge/does-not-exist not found');
    expect(out.stderr.text()).not.toMatch(/\n\s+at /);
  });

  it('an unreachable Secrets Manager endpoint is a clear error', async () => {
    const out = io();
    expect(
      await run(['secrets', 'signing', 'list', '--endpoint-secretsmanager', 'http://127.0.0.1:1', '--secret-id', 'x', '--json'], out),
    ).toBe(1);
    expect(JSON.parse(out.stdout.text())).toMatchObject({
      ok: false,
      error: { code: 'unreachable', message: 'cannot reach Secrets Manager at http://127.0.0.1:1 (ECONNREFUSED)' },
    });
  });
});

describe('bridge secrets set slack-signing-secret', () => {
  it('puts the secret as Slack shows it, or a JSON array while regenerating, read from stdin only', async () => {
    const id = fresh();
    const out = io({ stdinText: '  8f742231b10e8888abcd99yyyzzz85a5\n' });
    expect(await run(['secrets', 'set', 'slack-signing-secret', ...sm_(id), '--json'], out)).toBe(0);
    expect(server.currentValue(id)).toBe('8f742231b10e8888abcd99yyyzzz85a5');
    expect(JSON.parse(out.stdout.text())).toMatchObject({
      secret: 'slack-signing-secret',
      secretId: id,
      fingerprint: expect.stringMatching(/^sha256:[0-9a-f]{8}$/) as unknown,
    });
    expect(out.stdout.text() + out.stderr.text()).not.toContain('8f742231b10e8888abcd99yyyzzz85a5');

    const both = io({ stdinText: '["new0000secret", "old0000secret"]' });
    expect(await run(['secrets', 'set', 'slack-signing-secret', ...sm_(id)], both)).toBe(0);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual(['new0000secret', 'old0000secret']);
    expect(both.stdout.text()).toContain('The Slack function picks it up');
  });

  it('never takes the value from the command line, and refuses values the Slack function could not use (exit 2)', async () => {
    const id = fresh('8f742231b10e8888abcd99yyyzzz85a5');
    const argvOnly = io();
    expect(await run(['secrets', 'set', 'slack-signing-secret', '--value', 'abc123', ...sm_(id)], argvOnly)).toBe(2);
    expect(argvOnly.stderr.text()).toContain('never taken from the command line');
    for (const value of ['', 'PLACEHOLDER', 'two secrets', '["unterminated"', '[]', '["ok", 3]', 'naïve-secret']) {
      const out = io({ stdinText: value });
      expect(await run(['secrets', 'set', 'slack-signing-secret', ...sm_(id)], out), JSON.stringify(value)).toBe(2);
      expect(out.stderr.text()).toContain('the Slack signing secret');
    }
    expect(server.currentValue(id)).toBe('8f742231b10e8888abcd99yyyzzz85a5');
  });

  it('takes the secret ARN from the stack output SlackSigningSecretSecretArn', async () => {
    const id = fresh();
    const describeStack = (name: string): Promise<StackInfo> =>
      Promise.resolve({ name, status: 'UPDATE_COMPLETE', outputs: { SlackSigningSecretSecretArn: id } });
    const out = io({ describeStack, stdinText: 'abcdef0123456789\n' });
    expect(
      await run(
        ['secrets', 'set', 'slack-signing-secret', '--stack', 'VisibilitySlackBridge-test', '--endpoint-secretsmanager', server.url],
        out,
      ),
    ).toBe(0);
    expect(server.currentValue(id)).toBe('abcdef0123456789');
  });
});

describe('bridge secrets signing', () => {
  it('add reads the secret from stdin as README step 6 shows it (no flag)', async () => {
    const id = fresh(JSON.stringify(['whsec_old']));
    expect(await run(['secrets', 'signing', 'add', ...sm_(id)], io({ stdinText: 'whsec_from_stdin\n' }))).toBe(0);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual(['whsec_old', 'whsec_from_stdin']);
  });

  it('add / list / remove keep a JSON array and show fingerprints only', async () => {
    const id = fresh();
    const first = 'whsec_first_secret_value';
    const second = 'whsec_second_secret_value_longer';

    const added = io();
    expect(await run(['secrets', 'signing', 'add', '--value', ` ${first}\n`, ...sm_(id)], added)).toBe(0);
    expect(server.currentValue(id)).toBe(JSON.stringify([first]));
    expect(added.stderr.text()).toContain('create a new webhook');

    expect(await run(['secrets', 'signing', 'add', '--value-stdin', ...sm_(id)], io({ stdinText: `${second}\n` }))).toBe(0);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual([first, second]);

    const again = io();
    expect(await run(['secrets', 'signing', 'add', '--value', first, ...sm_(id)], again)).toBe(0);
    expect(again.stdout.text()).toContain('already present');
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual([first, second]);

    const listed = io();
    expect(await run(['secrets', 'signing', 'list', ...sm_(id)], listed)).toBe(0);
    expect(listed.stdout.text()).toBe('[1] sha256:ac2e9c6f\n[2] sha256:0be8d748\n');
    const listedJson = io();
    expect(await run(['secrets', 'signing', 'list', ...sm_(id), '--json'], listedJson)).toBe(0);
    const doc = JSON.parse(listedJson.stdout.text()) as { secrets: { index: number; fingerprint: string; length: number }[] };
    expect(doc.secrets).toEqual([
      { index: 1, fingerprint: 'sha256:ac2e9c6f', length: 24 },
      { index: 2, fingerprint: 'sha256:0be8d748', length: 32 },
    ]);
    for (const out of [added, again, listed, listedJson]) {
      expect(out.stdout.text() + out.stderr.text()).not.toContain(first);
      expect(out.stdout.text() + out.stderr.text()).not.toContain(second);
    }

    expect(await run(['secrets', 'signing', 'remove', '--value', first, ...sm_(id)], io())).toBe(0);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual([second]);

    const last = io();
    expect(await run(['secrets', 'signing', 'remove', '--index', '1', ...sm_(id)], last)).toBe(1);
    expect(last.stderr.text()).toContain('refusing to remove the last signing secret');
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual([second]);
  });

  it('remove --index, and unknown values or indexes fail', async () => {
    const id = fresh(JSON.stringify(['aaaa1111', 'bbbb2222', 'cccc3333']));
    expect(await run(['secrets', 'signing', 'remove', '--index', '2', ...sm_(id)], io())).toBe(0);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual(['aaaa1111', 'cccc3333']);
    expect(await run(['secrets', 'signing', 'remove', '--index', '5', ...sm_(id)], io())).toBe(1);
    expect(await run(['secrets', 'signing', 'remove', '--value', 'zzzz', ...sm_(id)], io())).toBe(1);
    expect(JSON.parse(server.currentValue(id) ?? '')).toEqual(['aaaa1111', 'cccc3333']);
  });

  it('a secret without any value yet counts as an empty list', async () => {
    const id = fresh(undefined);
    const out = io();
    expect(await run(['secrets', 'signing', 'list', ...sm_(id)], out)).toBe(0);
    expect(out.stdout.text()).toContain('no signing secret set');
    expect(await run(['secrets', 'signing', 'add', '--value', 'whsec_new', ...sm_(id)], io())).toBe(0);
    expect(server.currentValue(id)).toBe('["whsec_new"]');
  });

  it('refuses to touch a signing secret that is not a JSON array of strings', async () => {
    const id = fresh('["ok", 3]');
    const out = io();
    expect(await run(['secrets', 'signing', 'add', '--value', 'whsec_x', ...sm_(id)], out)).toBe(1);
    expect(out.stderr.text()).toContain('not a JSON array of strings');
    expect(server.currentValue(id)).toBe('["ok", 3]');
  });
});
