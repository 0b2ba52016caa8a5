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

export interface FunctionLine {
  functionLogicalId: string;
  stream: 'stdout' | 'stderr';
  line: string;
}

type Failure = { ok: false; errorType: string; errorMessage: string };
/** What an environment answers an invocation. */
type Answer = { ok: true; result: unknown } | Failure;
/** What lambda-runtime.cjs sends over IPC. */
type RuntimeMessage = { type: string; result?: unknown; error?: Partial<Failure> };

interface Environment {
  child: ChildProcess;
  /** The AWS session token it signs with: the call recorder tells environments apart by it. */
  session: string;
  ready: Promise<{ ok: true } | Failure>;
  busy: boolean;
  dead: boolean;
  /** Settles the invocation running in it (one at a time). */
  settle: ((answer: Answer) => void) | undefined;
}

export class RehearsedFunction {
  private environments: Environment[] = [];
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
  async invoke(event: unknown): Promise<Answer> {
    if (this.closed) throw new Error(`${this.spec.logicalId}: the rehearsal is over`);
    const started = Date.now();
    const environment = await this.acquire();
    try {
      const init = await environment.ready;
      if (!init.ok) {
        this.failed(environment, init);
        return init;
      }
      const release = this.plumbing.serving?.(environment.session, event);
      const answer = await this.run(environment, event, started).finally(release);
      if (!answer.ok) this.failed(environment, answer);
      return answer;
    } finally {
      environment.busy = false;
      if (environment.dead) this.environments = this.environments.filter((other) => other !== environment);
      this.waiting.shift()?.();
    }
  }

  /** Invokes the function once; its result, or its error thrown. */
  async call(event: unknown): Promise<unknown> {
    const answer = await this.invoke(event);
    if (!answer.ok) throw new Error(`${answer.errorType}: ${answer.errorMessage}`);
    return answer.result;
  }

  /** Kills one busy environment, as a crash (out of memory, a killed sandbox) would. */
  crashOne(): boolean {
    const busy = this.environments.find((environment) => environment.busy && !environment.dead);
    busy?.child.kill('SIGKILL');
    return busy !== undefined;
  }

  /** Ends every environment (the next invocation starts cold, e.g. after a secret was rotated). */
  recycle(): void {
    for (const environment of this.environments.filter((idle) => !idle.busy)) {
      environment.dead = true;
      environment.child.kill('SIGKILL');
    }
    this.environments = this.environments.filter((environment) => !environment.dead);
  }

  close(): void {
    this.closed = true;
    for (const environment of this.environments) environment.child.kill('SIGKILL');
    this.environments = [];
  }

  private failed(environment: Environment, { errorType }: Failure): void {
    this.errorCount += 1;
    this.onError();
    if (errorType === 'Sandbox.Timedout' || errorType.startsWith('Runtime.')) environment.dead = true;
  }

  /** An idle environment, else a new one (a cold start) while there are fewer than MAX_ENVIRONMENTS. */
  private async acquire(): Promise<Environment> {
    for (;;) {
      const idle = this.environments.find((environment) => !environment.busy && !environment.dead);
      const environment = idle ?? (this.environments.length < MAX_ENVIRONMENTS ? this.start() : undefined);
      if (environment) {
        environment.busy = true;
        return environment;
      }
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    }
  }

  private run(environment: Environment, event: unknown, started: number): Promise<Answer> {
    const id = randomUUID();
    const { timeoutSeconds, functionName, functionArn, memoryMb, logGroupName } = this.spec;
    return new Promise((resolve) => {
      const timedOut = (): void => {
        environment.settle = undefined;
        environment.dead = true;
        environment.child.kill('SIGKILL');
        resolve({ ok: false, errorType: 'Sandbox.Timedout', errorMessage: `Task timed out after ${timeoutSeconds.toFixed(2)} seconds` });
      };
      const timer = setTimeout(timedOut, timeoutSeconds * 1000 - (Date.now() - started));
      environment.settle = (answer) => {
        clearTimeout(timer);
        environment.settle = undefined;
        resolve(answer);
      };
      environment.child.send(
        {
          type: 'invoke',
          event,
          deadlineMs: started + timeoutSeconds * 1000,
          context: {
            awsRequestId: id,
            functionName,
            functionVersion: '$LATEST',
            invokedFunctionArn: functionArn,
            memoryLimitInMB: String(memoryMb),
            logGroupName,
            logStreamName: `rehearsal/[$LATEST]${id.slice(0, 8)}`,
          },
        },
        // An environment killed meanwhile (a time-out, the rehearsal closing) can't take it: the invocation fails, the rehearsal goes on.
        (error) => {
          if (error)
            environment.settle?.({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `environment gone: ${error.message}` });
        },
      );
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
    const environment: Environment = { child, session, ready: Promise.resolve({ ok: true }), busy: false, dead: false, settle: undefined };
    this.environments.push(environment);
    for (const stream of ['stdout', 'stderr'] as const) {
      createInterface({ input: child[stream]! }).on('line', (line) => this.onLine({ functionLogicalId: spec.logicalId, stream, line }));
    }
    environment.ready = new Promise((resolve) => {
      child.on('message', ({ type, result, error }: RuntimeMessage) => {
        const { errorType = 'Error', errorMessage = '' } = error ?? {};
        if (type === 'ready') resolve({ ok: true });
        if (type === 'init_error') resolve({ ok: false, errorType: 'Runtime.InitError', errorMessage: errorMessage || 'init failed' });
        if (type === 'result') environment.settle?.({ ok: true, result });
        if (type === 'error') environment.settle?.({ ok: false, errorType, errorMessage });
      });
      // A fork that can't start (its work directory removed at close) is an environment that never got ready.
      child.on('error', (error) => {
        environment.dead = true;
        resolve({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `environment failed: ${error.message}` });
      });
      child.on('exit', (code, signal) => {
        environment.dead = true;
        resolve({ ok: false, errorType: 'Runtime.ExitError', errorMessage: `environment exited before init (${signal ?? code})` });
        environment.settle?.({
          ok: false,
          errorType: 'Runtime.ExitError',
          errorMessage: `RequestId: exited with ${signal ?? `code ${code}`}`,
        });
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
