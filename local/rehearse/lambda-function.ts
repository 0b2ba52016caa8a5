/**
 * A rehearsed Lambda function: its cdk.out asset copied to a directory of its own, run in child
 * processes (`lambda-runtime.cjs`) with exactly the template's handler and environment (references
 * resolved to the local resources) plus what the Lambda service itself sets, its timeout enforced
 * (the environment is killed, as Lambda does) and its memory as the V8 heap limit.
 *
 * One invocation per environment at a time; a busy function gets another environment (a cold
 * start), up to MAX_ENVIRONMENTS. Every line an environment prints is handed to `onLine`.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const RUNTIME = fileURLToPath(new URL('./lambda-runtime.cjs', import.meta.url));
const EGRESS = fileURLToPath(new URL('./egress.cjs', import.meta.url));
/** Environments of one function at most: a busier function waits for a free one. */
const MAX_ENVIRONMENTS = 4;

export interface LambdaFunctionSpec {
  /** Logical id in the template (also the principal its AWS calls are signed as). */
  logicalId: string;
  functionName: string;
  functionArn: string;
  /** `index.handler` */
  handler: string;
  /** The cdk.out asset directory of its code. */
  assetDir: string;
  timeoutSeconds: number;
  memoryMb: number;
  /** The template's variables, resolved. */
  environment: Record<string, string>;
  logGroupName: string;
  runtime: string;
}

export interface RehearsalPlumbing {
  region: string;
  /** AWS_ENDPOINT_URL_* of the local peers (through the call recorder). */
  awsEndpoints: Record<string, string>;
  /** Public origin → local origin (egress.cjs). */
  egress: Record<string, string>;
  /** Where each function's code copy goes. */
  workDir: string;
  /** Told which invocation an environment (by the session token it signs with) serves, until the returned function is called. */
  serving?: (session: string, event: unknown) => () => void;
}

export type InvocationOutcome =
  | { kind: 'result'; result: unknown; durationMs: number; coldStart: boolean }
  | { kind: 'error'; errorType: string; errorMessage: string; durationMs: number; coldStart: boolean };

export interface FunctionLine {
  functionLogicalId: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

type Failure = { ok: false; errorType: string; errorMessage: string };
/** What an environment answers an invocation. */
type Answer = { ok: true; result: unknown } | Failure;

interface Environment {
  child: ChildProcess;
  /** The AWS session token it signs with: the call recorder tells environments apart by it. */
  session: string;
  ready: Promise<{ ok: true } | Failure>;
  busy: boolean;
  dead: boolean;
  pending: Map<string, (answer: Answer) => void>;
}

export class RehearsedFunction {
  private readonly environments: Environment[] = [];
  private readonly waiting: (() => void)[] = [];
  private readonly taskRoot: string;
  private errorCount = 0;
  private closed = false;

  constructor(
    readonly spec: LambdaFunctionSpec,
    private readonly plumbing: RehearsalPlumbing,
    private readonly onLine: (line: FunctionLine) => void,
    /** Called on each failed invocation. */
    private readonly onError: () => void,
  ) {
    this.taskRoot = join(plumbing.workDir, spec.logicalId, 'task');
    mkdirSync(this.taskRoot, { recursive: true });
    cpSync(spec.assetDir, this.taskRoot, { recursive: true });
  }

  get errors(): number {
    return this.errorCount;
  }

  /** Invokes the function once (waits for a free environment when all are busy). */
  async invoke(event: unknown): Promise<InvocationOutcome> {
    if (this.closed) throw new Error(`${this.spec.logicalId}: the rehearsal is over`);
    const started = Date.now();
    const { environment, coldStart } = await this.acquire();
    try {
      const init = await environment.ready;
      if (!init.ok) return this.failed(environment, init, started, coldStart);
      const release = this.plumbing.serving?.(environment.session, event);
      const answer = await this.run(environment, event, started).finally(release);
      if (answer.ok) return { kind: 'result', result: answer.result, durationMs: Date.now() - started, coldStart };
      return this.failed(environment, answer, started, coldStart);
    } finally {
      environment.busy = false;
      if (environment.dead) this.environments.splice(this.environments.indexOf(environment), 1);
      this.waiting.shift()?.();
    }
  }

  /** Invokes the function once; its result, or its error thrown. */
  async call(event: unknown): Promise<unknown> {
    const outcome = await this.invoke(event);
    if (outcome.kind === 'error') throw new Error(`${outcome.errorType}: ${outcome.errorMessage}`);
    return outcome.result;
  }

  /** Kills one busy environment, as a crash (out of memory, a killed sandbox) would. */
  crashOne(): boolean {
    const busy = this.environments.find((environment) => environment.busy && !environment.dead);
    busy?.child.kill('SIGKILL');
    return busy !== undefined;
  }

  /** Ends every environment (the next invocation starts cold, e.g. after a secret was rotated). */
  recycle(): void {
    for (const environment of this.environments) {
      if (!environment.busy) {
        environment.dead = true;
        environment.child.kill('SIGKILL');
      }
    }
    for (let i = this.environments.length - 1; i >= 0; i--) if (this.environments[i]!.dead) this.environments.splice(i, 1);
  }

  close(): void {
    this.closed = true;
    for (const environment of this.environments) environment.child.kill('SIGKILL');
    this.environments.length = 0;
  }

  private failed(
    environment: Environment,
    problem: { errorType: string; errorMessage: string },
    started: number,
    coldStart: boolean,
  ): InvocationOutcome {
    this.errorCount += 1;
    const outcome: InvocationOutcome = { kind: 'error', ...problem, durationMs: Date.now() - started, coldStart };
    this.onError();
    if (problem.errorType === 'Sandbox.Timedout' || problem.errorType.startsWith('Runtime.')) environment.dead = true;
    return outcome;
  }

  private async acquire(): Promise<{ environment: Environment; coldStart: boolean }> {
    for (;;) {
      const idle = this.environments.find((environment) => !environment.busy && !environment.dead);
      if (idle) {
        idle.busy = true;
        return { environment: idle, coldStart: false };
      }
      if (this.environments.length < MAX_ENVIRONMENTS) {
        const fresh = this.start();
        fresh.busy = true;
        this.environments.push(fresh);
        return { environment: fresh, coldStart: true };
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private run(environment: Environment, event: unknown, started: number): Promise<Answer> {
    const id = randomUUID();
    const timeoutMs = this.spec.timeoutSeconds * 1000;
    return new Promise((resolve) => {
      const timer = setTimeout(
        () => {
          environment.pending.delete(id);
          environment.dead = true;
          environment.child.kill('SIGKILL');
          resolve({
            ok: false,
            errorType: 'Sandbox.Timedout',
            errorMessage: `Task timed out after ${this.spec.timeoutSeconds.toFixed(2)} seconds`,
          });
        },
        timeoutMs - (Date.now() - started),
      );
      environment.pending.set(id, (outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      });
      environment.child.send({
        type: 'invoke',
        id,
        event,
        deadlineMs: started + timeoutMs,
        context: {
          awsRequestId: id,
          functionName: this.spec.functionName,
          functionVersion: '$LATEST',
          invokedFunctionArn: this.spec.functionArn,
          memoryLimitInMB: String(this.spec.memoryMb),
          logGroupName: this.spec.logGroupName,
          logStreamName: `rehearsal/[$LATEST]${id.slice(0, 8)}`,
        },
      });
    });
  }

  private start(): Environment {
    const { spec } = this;
    const session = `${spec.logicalId}-${randomUUID()}`;
    const child = fork(RUNTIME, [], {
      cwd: this.taskRoot,
      env: this.environmentVariables(session),
      execArgv: ['--require', EGRESS, `--max-old-space-size=${Math.max(64, Math.floor(spec.memoryMb * 0.9))}`],
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      serialization: 'advanced',
    });
    const environment: Environment = { child, session, ready: Promise.resolve({ ok: true }), busy: false, dead: false, pending: new Map() };
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream]! }).on('line', (line) => this.onLine({ functionLogicalId: spec.logicalId, stream, line }));
    }
    environment.ready = new Promise((resolve) => {
      child.on(
        'message',
        (message: { type: string; id?: string; result?: unknown; error?: { errorType: string; errorMessage: string } }) => {
          if (message.type === 'ready') resolve({ ok: true });
          else if (message.type === 'init_error') {
            resolve({ ok: false, errorType: 'Runtime.InitError', errorMessage: message.error?.errorMessage ?? 'init failed' });
          } else if (message.type === 'result' || message.type === 'error') {
            const settle = environment.pending.get(message.id ?? '');
            environment.pending.delete(message.id ?? '');
            settle?.(
              message.type === 'result'
                ? { ok: true, result: message.result }
                : { ok: false, errorType: message.error?.errorType ?? 'Error', errorMessage: message.error?.errorMessage ?? '' },
            );
          }
        },
      );
      child.on('exit', (code, signal) => {
        environment.dead = true;
        resolve({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `environment exited before init (${signal ?? code})` });
        for (const settle of environment.pending.values()) {
          settle({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `RequestId: exited with ${signal ?? `code ${code}`}` });
        }
        environment.pending.clear();
      });
    });
    return environment;
  }

  /** The template's variables plus those the Lambda service sets; AWS endpoints point at the recorder. */
  private environmentVariables(session: string): NodeJS.ProcessEnv {
    const { spec, plumbing } = this;
    return {
      ...spec.environment,
      ...plumbing.awsEndpoints,
      REHEARSAL_EGRESS: JSON.stringify(plumbing.egress),
      AWS_REGION: plumbing.region,
      AWS_DEFAULT_REGION: plumbing.region,
      // Each function signs as itself: the recorder attributes every call to its role.
      AWS_ACCESS_KEY_ID: spec.logicalId,
      AWS_SECRET_ACCESS_KEY: 'rehearsal',
      AWS_SESSION_TOKEN: session,
      AWS_LAMBDA_FUNCTION_NAME: spec.functionName,
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb),
      AWS_LAMBDA_LOG_GROUP_NAME: spec.logGroupName,
      AWS_LAMBDA_LOG_STREAM_NAME: 'rehearsal',
      AWS_EXECUTION_ENV: `AWS_Lambda_${spec.runtime}`,
      LAMBDA_TASK_ROOT: this.taskRoot,
      LAMBDA_RUNTIME_DIR: this.taskRoot,
      _HANDLER: spec.handler,
      TZ: ':UTC',
      LANG: 'en_US.UTF-8',
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
    };
  }
}
