/**
 * Reading a secret value without it reaching the shell history: piped on stdin (`… | npx bridge
 * secrets …`), or typed/pasted at a prompt that does not echo when stdin is a terminal.
 */
import { CliError, UsageError } from './errors';
import type { CliIo } from './io';

type Stdin = NonNullable<CliIo['stdin']>;

function text(chunk: unknown): string {
  return typeof chunk === 'string' ? chunk : Buffer.isBuffer(chunk) ? chunk.toString('utf8') : String(chunk);
}

/** Everything piped on stdin, up to its end. */
async function readAll(stdin: Stdin): Promise<string> {
  const chunks: string[] = [];
  for await (const chunk of stdin) chunks.push(text(chunk));
  return chunks.join('');
}

const ENTER = new Set(['\r', '\n', '\u0004']);
const CTRL_C = '\u0003';
const BACKSPACE = new Set(['\u007f', '\b']);

/**
 * One line from a terminal in raw mode, so what is typed is not shown; Enter (or Ctrl-D) ends it,
 * Ctrl-C cancels. A terminal without raw mode still works, it only echoes.
 */
async function promptHidden(io: CliIo, stdin: Stdin, label: string): Promise<string> {
  io.stderr.write(`${label} (input hidden, Enter to finish): `);
  stdin.setRawMode?.(true);
  let value = '';
  try {
    for await (const chunk of stdin) {
      for (const ch of text(chunk)) {
        if (ENTER.has(ch)) return value;
        if (ch === CTRL_C) throw new CliError('cancelled; nothing was changed', undefined, 'cancelled');
        value = BACKSPACE.has(ch) ? value.slice(0, -1) : value + ch;
      }
    }
    return value;
  } finally {
    stdin.setRawMode?.(false);
    io.stderr.write('\n');
  }
}

/**
 * The value of `what` (e.g. "Slack signing secret"): from a hidden prompt when stdin is a terminal,
 * else all of stdin. A run without stdin (embedded use) is a usage error naming both ways.
 */
export async function readSecretInput(io: CliIo, what: string, command: string): Promise<string> {
  const stdin = io.stdin;
  if (stdin === undefined) throw new UsageError(`no ${what} given: pipe it on stdin, or run on a terminal to be prompted`, command);
  if (stdin.isTTY === true) return promptHidden(io, stdin, `Paste the ${what}`);
  return readAll(stdin);
}
