/**
 * One Lambda execution environment of the deploy rehearsal, run as a child process in a copy of the
 * function's cdk.out asset (no project node_modules): it loads `_HANDLER` from the task root at
 * start (init, as Lambda does), then runs one invocation at a time as the parent sends them over
 * IPC. Plain CommonJS with no dependencies, so nothing of the project leaks into the function.
 *
 * Like the Lambda Node.js runtime (text log format), console lines get the
 * `<time>\t<request id>\t<LEVEL>\t` prefix; the parent reads stdout/stderr line by line.
 */
'use strict';
const path = require('node:path');
const { format } = require('node:util');

const taskRoot = process.env.LAMBDA_TASK_ROOT || process.cwd();
const handlerSpec = process.env._HANDLER || 'index.handler';
let requestId = undefined;

for (const [method, level] of Object.entries({ log: 'INFO', info: 'INFO', warn: 'WARN', error: 'ERROR', debug: 'DEBUG', trace: 'TRACE' })) {
  const stream = method === 'error' || method === 'warn' ? process.stderr : process.stdout;
  console[method] = (...args) => {
    const text = format(...args).replace(/\n/g, '\r');
    stream.write(`${new Date().toISOString()}\t${requestId ?? 'undefined'}\t${level}\t${text}\n`);
  };
}

function loadHandler() {
  const dot = handlerSpec.lastIndexOf('.');
  const file = handlerSpec.slice(0, dot);
  const name = handlerSpec.slice(dot + 1);
  const mod = require(path.join(taskRoot, file));
  const fn = mod[name];
  if (typeof fn !== 'function') throw new Error(`Runtime.HandlerNotFound: ${handlerSpec} is undefined or not exported`);
  return fn;
}

function describe(error) {
  if (error instanceof Error) return { errorType: error.name, errorMessage: error.message, stack: String(error.stack ?? '').split('\n') };
  return { errorType: 'Error', errorMessage: String(error), stack: [] };
}

let handler;
try {
  handler = loadHandler();
  process.send({ type: 'ready' });
} catch (error) {
  process.send({ type: 'init_error', error: describe(error) });
  // Lambda reports the init error on the invocation and starts a fresh environment next time.
  setTimeout(() => process.exit(1), 50);
}

process.on('message', (message) => {
  if (message === null || typeof message !== 'object' || message.type !== 'invoke') return;
  const { event, deadlineMs, context } = message;
  requestId = context.awsRequestId;
  const lambdaContext = {
    ...context,
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadlineMs - Date.now()),
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
  Promise.resolve()
    .then(() => handler(event, lambdaContext))
    .then(
      (result) => process.send({ type: 'result', result: result === undefined ? null : result }),
      (error) => {
        const { errorType, errorMessage } = describe(error);
        console.error(JSON.stringify({ errorType, errorMessage }));
        process.send({ type: 'error', error: describe(error) });
      },
    );
});

// The parent settles the invocation when the environment exits (Runtime.ExitError).
process.on('uncaughtException', () => process.exit(129));
