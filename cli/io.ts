/**
 * What a command talks to: two output streams, stdin, the environment and a few test seams.
 * `run(argv, io)` takes one of these, so commands run in-process in tests with captured output.
 */
import type { DescribeStackFn } from './aws';
import { DEFAULT_READY_FILE } from '../local/ready-info';
import { sleep } from '../shared/util';

export interface OutputStream {
  write(chunk: string): unknown;
  /** Set on a terminal: progress lines and colours are only drawn then. */
  isTTY?: boolean;
}

export interface CliIo {
  stdout: OutputStream;
  stderr: OutputStream;
  /**
   * Where secret values are read from (`--value -`, or no --value): piped text, or a hidden prompt on a
   * terminal (raw mode via `setRawMode`). `processIo()` sets process.stdin; without one nothing is read.
   */
  stdin?: AsyncIterable<Buffer | string> & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Environment (default process.env): AWS_REGION, AWS_ENDPOINT_URL_*, … */
  env?: Readonly<Record<string, string | undefined>>;
  /** HTTP client for `send` and the read-API check (default global fetch). */
  fetch?: typeof fetch;
  /** Clock in epoch ms (default Date.now). */
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  /** Replaces CloudFormation DescribeStacks (there is no local CloudFormation peer). */
  describeStack?: DescribeStackFn;
  /** Calls `handler` on Ctrl-C (SIGINT) until the returned function is called. */
  onInterrupt?: (handler: () => void) => () => void;
  /**
   * The ready file `npm start` writes by default: used when a command is given neither --local nor
   * --stack. Set by `processIo()` only, so in-process runs never pick up a running stack by accident.
   */
  defaultReadyFile?: string;
  /** How often `dlq replay` polls ListMessageMoveTasks and `smoke` the stack's records (default 1000 ms). */
  pollIntervalMs?: number;
}

/** Environment variables the CLI itself reads. */
export const CLI_ENV = {
  /** The deployed stack commands use when no --stack is given and no local stack runs. */
  stack: 'BRIDGE_STACK',
  /** The ready file of the local stack to pick up by itself (default .local/ready.json). */
  readyFile: 'BRIDGE_READY_FILE',
} as const;

export const defaultSleep = sleep;

/** The process's own streams and environment. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    defaultReadyFile: process.env[CLI_ENV.readyFile] ?? DEFAULT_READY_FILE,
    onInterrupt: (handler) => {
      process.once('SIGINT', handler);
      return () => process.off('SIGINT', handler);
    },
  };
}

/** An in-memory io for tests and embedding: everything written is kept as text. */
export interface BufferedIo extends CliIo {
  stdout: OutputStream & { text: () => string };
  stderr: OutputStream & { text: () => string };
}

export function bufferIo(options: Omit<CliIo, 'stdout' | 'stderr'> & { tty?: boolean; stdinText?: string } = {}): BufferedIo {
  const stream = (tty: boolean): OutputStream & { text: () => string } => {
    const chunks: string[] = [];
    return {
      isTTY: tty,
      write: (chunk: string) => {
        chunks.push(chunk);
        return true;
      },
      text: () => chunks.join(''),
    };
  };
  const { tty, stdinText, ...rest } = options;
  const io: BufferedIo = { ...rest, stdout: stream(tty ?? false), stderr: stream(tty ?? false) };
  if (stdinText !== undefined && io.stdin === undefined) {
    io.stdin = (async function* () {
      await Promise.resolve();
      yield stdinText;
    })();
  }
  io.env ??= {};
  return io;
}

/**
 * Human text goes to stdout only without `--json`; with `--json` the command's result is the one
 * JSON document written to stdout (by `main`), and warnings go to stderr.
 */
export class Output {
  constructor(
    readonly io: CliIo,
    readonly json: boolean,
  ) {}

  /** A line of human output (dropped in JSON mode). */
  say(line = ''): void {
    if (!this.json) this.io.stdout.write(`${line}\n`);
  }

  /** A warning: stderr, in both modes. */
  warn(line: string): void {
    this.io.stderr.write(`warning: ${line}\n`);
  }

  /** Whether a live progress line may be drawn (human mode on a terminal). */
  get tty(): boolean {
    return !this.json && this.io.stdout.isTTY === true;
  }

  /** A live progress indicator: redraws one line on a TTY, silent otherwise. */
  progress(): Progress {
    return new Progress(this.tty ? this.io.stdout : undefined);
  }
}

export class Progress {
  private drawn = false;
  constructor(private readonly stream: OutputStream | undefined) {}

  update(text: string): void {
    if (this.stream === undefined) return;
    this.stream.write(`\r\x1b[2K${text}`);
    this.drawn = true;
  }

  /** Clears the line, so the next output starts clean. */
  done(): void {
    if (this.stream === undefined || !this.drawn) return;
    this.stream.write('\r\x1b[2K');
    this.drawn = false;
  }
}
