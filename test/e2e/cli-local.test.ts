// The `bridge` CLI as a user runs it: `npm start` (local/start.ts) as a subprocess on free ports
// with its own ready file, and each CLI command as a subprocess that finds the stack by itself
// (BRIDGE_READY_FILE, as `npx bridge` next to `npm start` finds .local/ready.json).
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { sleep } from '../../shared/util';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReadyInfo } from '../../local/ready-info';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'bridge-cli-e2e-'));
const stacks: ChildProcess[] = [];

interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

function tsx(script: string, args: readonly string[], env: Record<string, string> = {}, stdin?: string): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', script, ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: '1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...env },
    stdio: [stdin === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdin !== undefined) child.stdin?.end(stdin);
  return child;
}

function collect(child: ChildProcess): { out: () => string; err: () => string; done: Promise<number | null> } {
  let out = '';
  let err = '';
  child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString('utf8')));
  child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString('utf8')));
  const done = new Promise<number | null>((resolveDone) => child.on('close', (code) => resolveDone(code)));
  return { out: () => out, err: () => err, done };
}

/** What `npm start` printed so far: its terminal (stdout and stderr). */
const terminals = new Map<string, () => string>();

/** `npm start` on free ports writing `readyFile`; resolves with the ready file once it exists. */
async function startStack(readyFile: string): Promise<ReadyInfo> {
  const child = tsx('local/start.ts', ['--port', '0', '--simulator-port', '0', '--no-demo', '--ready-file', readyFile]);
  stacks.push(child);
  const output = collect(child);
  terminals.set(readyFile, () => output.out() + output.err());
  // A deadline, not a count of tries: a loaded machine takes longer to start, not more often.
  const deadline = Date.now() + 120_000;
  while (!existsSync(readyFile) && Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`npm start exited: ${output.err()}`);
    await sleep(100);
  }
  return JSON.parse(readFileSync(readyFile, 'utf8')) as ReadyInfo;
}

/** The lines `npm start` printed after `mark` (a length of its terminal taken earlier). */
function terminalSince(readyFile: string, mark: number): string[] {
  return (terminals.get(readyFile)?.() ?? '')
    .slice(mark)
    .split('\n')
    .filter((line) => line.trim() !== '');
}

function bridge(args: readonly string[], readyFile: string, stdin?: string): Promise<Ran> {
  const run = collect(tsx('cli/main.ts', args, { BRIDGE_READY_FILE: readyFile }, stdin));
  return run.done.then((code) => ({ code, stdout: run.out(), stderr: run.err() }));
}

/** Probes until `probe` answers, for up to `timeoutMs` (generous: each probe may spawn a CLI on a loaded machine). */
async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined, timeoutMs = 90_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  do {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(200);
  } while (Date.now() < deadline);
  throw new Error(`gave up waiting for ${what} after ${timeoutMs} ms`);
}

const readyA = join(dir, 'a.json');
const readyB = join(dir, 'b.json');
let infoA: ReadyInfo;
/** The second `npm start`, started beside the first at once: its start overlaps the tests before the one that uses it. */
let startedB: Promise<ReadyInfo>;

beforeAll(async () => {
  infoA = await startStack(readyA);
  startedB = startStack(readyB);
  // Awaited by its test; a failed start must not go unhandled before then.
  startedB.catch(() => undefined);
}, 150_000);

afterAll(async () => {
  await Promise.all(
    stacks.map((child) => {
      const closed = new Promise((r) => child.on('close', r));
      if (child.exitCode === null) child.kill('SIGTERM');
      return closed;
    }),
  );
  rmSync(dir, { recursive: true, force: true });
});

// Each CLI run is a fresh Node process (a few seconds on a loaded machine).
describe('bridge against npm start', { timeout: 240_000 }, () => {
  it('the ready file names every port taken, the Secrets Manager and the event stream', () => {
    expect(infoA.ports.secretsManager).toBeGreaterThan(0);
    expect(infoA.ports.events).toBeGreaterThan(0);
    expect(infoA.secretsManagerEndpoint).toBe(`http://127.0.0.1:${infoA.ports.secretsManager}`);
    expect(infoA.eventsUrl).toBe(`http://127.0.0.1:${infoA.ports.events}/events`);
    expect(infoA.signingSecretsSecretId).toMatch(/^arn:aws:secretsmanager:/);
  });

  it('dlq stats finds the stack by its ready file and says so', async () => {
    const ran = await bridge(['dlq', 'stats', '--json'], readyA);
    expect(ran.stderr).toContain('using the local stack of `npm start`');
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(infoA.dlqUrl);
  });

  it('trigger run.completed is accepted, and tail shows the delivery and the digest; Ctrl-C stops tail with exit 0', async () => {
    const mark = terminals.get(readyA)?.().length ?? 0;
    const tail = tsx('cli/main.ts', ['tail'], { BRIDGE_READY_FILE: readyA });
    const tailed = collect(tail);
    await until('tail to subscribe', () => (tailed.err().includes('tailing the local stack') ? true : undefined));

    const triggered = await bridge(['trigger', 'run.completed', '--override', 'answers=12'], readyA);
    expect(triggered.code).toBe(0);
    expect(triggered.stdout).toContain('{"ok":true,"result":"accepted"}');
    const deliveryId = /delivery ([0-9a-f-]{36})/.exec(triggered.stdout)?.[1] ?? '';

    await until('the digest in tail', () => (tailed.out().includes('digest posted') ? true : undefined));
    expect(tailed.out()).toMatch(new RegExp(`delivery +ingest delivery accepted +deliveryId=${deliveryId}`));
    expect(tailed.out()).toMatch(new RegExp(`digest +digest digest posted +eventId=${deliveryId}`));

    // The npm start terminal: the delivery and one line for the digest (channel, headline, replies), not its text.
    const printed = await until('the digest line in the npm start terminal', () => {
      const lines = terminalSince(readyA, mark);
      return lines.some((l) => / digest {2}#/.test(l)) ? lines : undefined;
    });
    expect(printed.filter((l) => !/^webhook ← /.test(l))).toEqual([
      expect.stringMatching(new RegExp(`^\\d\\d:\\d\\d:\\d\\d digest {2}#visibility-digests {2}\\S.* {2}· \\d+ thread repl(y|ies)$`)),
    ]);

    tail.kill('SIGINT');
    expect(await tailed.done).toBe(0);
    expect(tailed.err()).toContain('stopped');
  });

  it('a deferred command prints its answer; a muted channel is one skip line in tail and in the npm start terminal', async () => {
    // Independent CLI runs side by side: the status look-up, the subscribe-then-mute, and tail starting.
    const tail = tsx('cli/main.ts', ['tail'], { BRIDGE_READY_FILE: readyA });
    const tailed = collect(tail);
    const subscribeThenMute = async () => {
      const subscribed = await bridge(['slack', 'command', '/visibility subscribe Northwind', '--channel', 'C0STORY'], readyA);
      expect(subscribed.stdout).toMatch(/^answer \(.*\):$/m);
      expect((await bridge(['slack', 'command', '/visibility mute Northwind 7d', '--channel', 'C0STORY'], readyA)).code).toBe(0);
    };
    const [status] = await Promise.all([
      bridge(['slack', 'command', '/visibility status Northwind', '--channel', 'C0STORY'], readyA),
      subscribeThenMute(),
      until('tail to subscribe', () => (tailed.err().includes('tailing the local stack') ? true : undefined)),
    ]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/^200 Looking up/m);
    expect(status.stdout).toMatch(/^answer \(only visible to you\):$/m);
    expect(status.stdout).toContain('Northwind Outdoor');

    const mark = terminals.get(readyA)?.().length ?? 0;
    const northwind = infoA.projectIds[0]!;
    expect((await bridge(['trigger', 'run.completed', '--override', `project_id=${northwind}`], readyA)).code).toBe(0);

    const skip = /skip +digest not posted to a channel that muted the project .*channel=C0STORY/;
    await until('the skip in tail', () => (skip.test(tailed.out()) ? true : undefined));
    await until('the skip in the npm start terminal', () =>
      terminalSince(readyA, mark).some((l) => /not posted to a channel that muted the project .*channel=C0STORY/.test(l))
        ? true
        : undefined,
    );
    // The home channel still gets the digest, one line.
    await until('the digest line', () => (terminalSince(readyA, mark).some((l) => / digest {2}#/.test(l)) ? true : undefined));
    tail.kill('SIGINT');
    expect(await tailed.done).toBe(0);
  });

  it('a signing secret added with bridge secrets is accepted by the local ingest within its cache time', async () => {
    const secret = 'whsec_e2e_rotation_secret_0123456789';
    const rejected = await bridge(['trigger', 'draft.ready', '--secret', secret], readyA);
    expect(rejected.code).toBe(1);
    expect(rejected.stdout).toContain('401');

    // README step 6 as written: the value piped on stdin, no flag.
    const added = await bridge(['secrets', 'signing', 'add'], readyA, `${secret}\n`);
    expect(added.code).toBe(0);
    expect(added.stdout).toMatch(/added sha256:[0-9a-f]{8}/);
    expect(added.stdout + added.stderr).not.toContain(secret);

    // The local functions re-read the secret every 2 s: retried until accepted.
    await until('the new secret to be accepted', async () =>
      (await bridge(['trigger', 'draft.ready', '--secret', secret], readyA)).code === 0 ? true : undefined,
    );

    const listed = await bridge(['secrets', 'signing', 'list'], readyA);
    expect(listed.stdout.trim().split('\n')).toHaveLength(2);
  });

  it('smoke follows one delivery to Slack, and send --duplicate works as the README shows it', async () => {
    // Two deliveries of their own, side by side.
    const [smoke, sent] = await Promise.all([bridge(['smoke'], readyA), bridge(['send', 'run.completed', '--duplicate'], readyA)]);
    expect(smoke.stderr).toContain('using the local stack of `npm start`');
    expect(smoke.code).toBe(0);
    expect(smoke.stdout).toMatch(/^✓ posted +C0LOCALDIGEST ts \S+$/m);
    expect(smoke.stdout).toContain('all 4 hops passed');

    expect(sent.code).toBe(0);
    expect(sent.stdout).toMatch(/#1 {2}200 .*"result":"accepted"/);
    expect(sent.stdout).toMatch(/#2 {2}200 .*"result":"duplicate"/);
  });

  it('dlq cancel with no move task, and a selector that matches nothing, exit 1 with a hint', async () => {
    const [cancel, none] = await Promise.all([bridge(['dlq', 'cancel'], readyA), bridge(['dlq', 'replay', '--event-id', 'nope'], readyA)]);
    expect(cancel.code).toBe(1);
    expect(cancel.stderr).toContain('no message move task is running');
    expect(cancel.stderr).toContain('npx bridge dlq stats');
    expect(none.code).toBe(1);
  });

  it('a second npm start runs beside the first on other ports, and --local picks it', async () => {
    const infoB = await startedB;
    const portsA = Object.values(infoA.ports).filter((p): p is number => p !== null);
    const portsB = Object.values(infoB.ports).filter((p): p is number => p !== null);
    expect(portsB.filter((p) => portsA.includes(p))).toEqual([]);

    const ran = await bridge(['dlq', 'stats', '--local', readyB, '--json'], readyA);
    expect(ran.code).toBe(0);
    expect(ran.stdout).toContain(infoB.dlqUrl);
    expect(ran.stdout).not.toContain(infoA.dlqUrl);
  });
});
