/**
 * `npm start` — the whole bridge on this machine against the visibility-service simulator.
 * See `npm start -- --help`.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { DEFAULT_READY_FILE } from './ready-info';
import { Command, InvalidArgumentError, Option } from 'commander';
import pc from 'picocolors';
import { DIGEST_MODES, ENV, HTTP_PATHS, type DigestMode } from '../shared/contracts';
import { dashboardUrlTemplateProblem } from '../shared/digest/links';
import { CHANNEL_ID_HINT, isHomeChannelId } from '../shared/routing';
import { LOCAL_DEFAULTS, LocalStackError, startLocalStack, type DeliverySummary, type LocalStack, type LocalStackOptions } from './stack';
import { SKIP_MESSAGES, type LocalLogEntry } from './local-observability';
import { sendDemoRun, type DemoRunOutcome } from './demo-history';
import { LOCAL_TOPOLOGY } from './topology';
import { MAX_CONNECTIONS } from './stack/connections';
import { isAlive } from './stack/data-dir';
import { writeJson } from './stack/state';
import type { PostedMessage, RecordedCall } from './slack/server';

const DEFAULT_PORT = 8787;
/** `npm run simulator`'s default port (local/simulator/main.ts): tried first so its trigger commands need no --url. */
const SIMULATOR_PORT = 8788;
const SHUTDOWN_TIMEOUT_MS = 15_000;

class UsageError extends Error {}

/** A whole number from `min` to `max`, as commander parses a flag's value. */
function wholeNumber(min: number, max: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value.trim()) || Number(value) < min || Number(value) > max)
      throw new InvalidArgumentError(`must be a whole number from ${min} to ${max}`);
    return Number(value);
  };
}

function nonEmpty(value: string): string {
  if (value.trim() === '') throw new InvalidArgumentError('needs a non-empty value');
  return value;
}

function dashboardUrl(template: string): string {
  const problem = dashboardUrlTemplateProblem(nonEmpty(template));
  if (problem !== null)
    throw new InvalidArgumentError(`${problem}, e.g. https://app.example.com/projects/{project_id}/prompts/{prompt_id}`);
  return template;
}

const PORT = wholeNumber(0, 65_535);

const program = new Command('npm start')
  .usage('-- [options]')
  .description(
    `Run the whole bridge on this machine: webhook endpoint (API Gateway + ingest function), DynamoDB (dynalite), SQS queue + DLQ, the digest function, a local Slack and the visibility-service simulator. This terminal prints one line per delivery, digest, skipped run, DLQ arrival and failure; the Slack preview (its URL is in the banner) shows every message in full.`,
  )
  .option('--port <n>', 'port of the webhook endpoint (0 = any free port)', PORT, DEFAULT_PORT)
  .option(
    '--secret <s>',
    'webhook signing secret (repeatable: all are accepted, the first is registered with the simulator); default: one generated and printed',
    (secret: string, secrets: string[] = []) => [...secrets, secret],
  )
  .option(
    '--connections <n>',
    'also run N clients of an agency: each a service workspace (its own simulator, projects, read key and webhook /webhook/client-a…) and a Slack workspace of the local Slack the app is installed in through "Add to Slack"; `npx bridge trigger|doctor --connection client-a` acts on one',
    wholeNumber(0, MAX_CONNECTIONS),
    0,
  )
  .option('--no-demo', "don't send a demo run.completed once ready")
  .option('--slack-log <file>', 'append one JSON line per Slack API call (method, channel, text, blocks, thread_ts)', nonEmpty)
  .option(
    '--fixture <file>',
    'simulator data from a JSON fixture (SimulatorFixture in local/simulator/fixture.ts) instead of generated projects',
    nonEmpty,
  )
  .option('--api-latency <ms>', 'latency the simulator adds to every read-API request', wholeNumber(0, 600_000))
  .option(
    '--dashboard-url <t>',
    'dashboard URL template for links in digests (https; placeholders {project_id}, {run_id}, {prompt_id}, {asset_id}); default: no links',
    dashboardUrl,
  )
  .addOption(
    new Option('--digest-mode <m>', 'full, or changes: a run where nothing moved posts one compact line')
      .choices(DIGEST_MODES)
      .default('full'),
  )
  .option(
    '--data-dir <dir>',
    'where the state is kept across restarts: the table, the queues and their DLQs, the secrets, the Slack messages (default .local/, or FILE.data/ beside a --ready-file FILE); the demo run is sent once per data dir',
    nonEmpty,
  )
  .option('--fresh', 'forget the kept state and start clean')
  .option(
    '--refuse-native-blocks',
    "the local Slack answers invalid_blocks to every chart and table block, as a workspace Slack's rollout has not reached: digests fall back to words (and the PNG)",
  )
  .option('--simulator-port <n>', `port of the simulator (default ${SIMULATOR_PORT}, or any free one if taken; 0 = any free port)`, PORT)
  .option(
    '--secrets-manager-port <n>',
    'port of the local Secrets Manager holding the signing secrets, read-API key and Slack token (0 = any free port; `npx bridge secrets …` changes them, the functions re-read them every 2 s)',
    PORT,
    0,
  )
  .option('--events-port <n>', 'port of the live event stream `npx bridge tail` reads (0 = any free port)', PORT, 0)
  .option(
    '--ready-file <file>',
    'where to write the endpoints, ports, secrets and project ids as JSON once ready (`npx bridge` reads the default by itself; removed again on shutdown)',
    nonEmpty,
    DEFAULT_READY_FILE,
  )
  .option(
    '--verbose',
    "print every Slack message in full and the functions' info log lines too (default: one line per digest, skip, DLQ arrival, warning and error)",
  )
  .helpOption('-h, --help', 'show this help')
  .showHelpAfterError('(see npm start -- --help)')
  .addHelpText(
    'after',
    `
Environment:
  SLACK_BOT_TOKEN + SLACK_CHANNEL                 post digests to this real Slack channel instead (its id, C…)
  VISIBILITY_API_BASE_URL + VISIBILITY_API_KEY    read from the real service instead of the simulator

Once running, trigger a run with the simulator CLI (the exact command is printed), e.g.
  npm run simulator -- trigger-run --url http://127.0.0.1:${SIMULATOR_PORT} --project <id>`,
  );

/** The flags as commander hands them over (camel-cased), with the data directory resolved. */
interface Args {
  port: number;
  secret?: string[];
  connections: number;
  demo: boolean;
  slackLog?: string;
  fixture?: string;
  apiLatency?: number;
  dashboardUrl?: string;
  digestMode: DigestMode;
  dataDir: string;
  fresh?: boolean;
  refuseNativeBlocks?: boolean;
  /** Undefined: try SIMULATOR_PORT, else any free port. */
  simulatorPort?: number;
  secretsManagerPort: number;
  eventsPort: number;
  readyFile: string;
  verbose?: boolean;
}

function parse(argv: string[]): Args {
  const args = program.parse(argv, { from: 'user' }).opts<Omit<Args, 'dataDir'> & { dataDir?: string }>();
  return { ...args, dataDir: args.dataDir ?? defaultDataDir(args.readyFile) };
}

/** `.local/` beside the default ready file; beside another ready file its own, so a second stack keeps its own state. */
function defaultDataDir(readyFile: string): string {
  return resolve(readyFile) === DEFAULT_READY_FILE ? dirname(DEFAULT_READY_FILE) : `${readyFile.replace(/\.json$/, '')}.data`;
}

/** Both variables of a pair, or neither. */
function envPair(a: string, b: string): [string, string] | undefined {
  const first = process.env[a]?.trim() ?? '';
  const second = process.env[b]?.trim() ?? '';
  if (first === '' && second === '') return undefined;
  if (first === '' || second === '') {
    const [set, unset] = first === '' ? [b, a] : [a, b];
    throw new UsageError(`${set} is set but ${unset} is not; set both (or neither, for the local stand-in)`);
  }
  return [first, second];
}

// ---------------------------------------------------------------------------------------------------
// Output
// ---------------------------------------------------------------------------------------------------

const useColor = process.stdout.isTTY === true && process.env['NO_COLOR'] === undefined;
const { bold, dim, green, yellow, red } = pc.createColors(useColor);

function out(line = ''): void {
  process.stdout.write(`${line}\n`);
}

function printDelivery(d: DeliverySummary): void {
  // Pages (Add to Slack, the workspaces page) are for the browser, not deliveries.
  if (d.method === 'GET' && d.status < 400) return;
  const id = d.deliveryId === undefined ? '' : ` ${d.deliveryId.slice(0, 8)}`;
  const client = d.path.startsWith(`${HTTP_PATHS.webhook}/`) ? ` → ${d.path.slice(HTTP_PATHS.webhook.length + 1)}` : '';
  const what =
    d.path.startsWith(HTTP_PATHS.webhook) && d.method === 'POST' ? `${d.eventType ?? 'delivery'}${id}${client}` : `${d.method} ${d.path}`;
  const status = d.status < 300 ? green(String(d.status)) : d.status >= 500 ? red(String(d.status)) : yellow(String(d.status));
  out(`${dim('webhook')} ← ${what}  ${status} ${d.outcome} ${dim(`(${Math.round(d.durationMs)} ms)`)}`);
}

/** --verbose: every message in full, as the local Slack renders it as text. */
function printSlackMessage(rendered: string, isReply: boolean): void {
  if (!isReply) out();
  out(isReply ? rendered : bold(rendered.split('\n')[0] ?? '') + rendered.slice(rendered.split('\n')[0]?.length ?? 0));
}

const HEADLINE_CHARS = 140;

function clock(at: number): string {
  return new Date(at).toISOString().slice(11, 19);
}

/** A message's notification text on one line: links as their label, Slack tokens as their fallback, cut to fit a terminal. */
function headlineOf(text: string | undefined): string {
  const line = (text ?? '')
    .split('\n')[0]!
    .replace(/<[^<>|]*\|([^<>]*)>/g, '$1')
    .replace(/<[#@!]?([^<>]*)>/g, '$1')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .trim();
  return line.length > HEADLINE_CHARS ? `${line.slice(0, HEADLINE_CHARS - 1)}…` : line;
}

function eventIdOf(message: PostedMessage): string | undefined {
  const payload = (message.metadata as { event_payload?: { event_id?: unknown } } | undefined)?.event_payload;
  return typeof payload?.event_id === 'string' ? payload.event_id : undefined;
}

const isTopLevel = (m: PostedMessage): boolean => m.thread_ts === undefined || m.thread_ts === m.ts;

/**
 * One line per channel a digest or draft notice went to, once the bridge logged it posted (its whole
 * thread is in by then): channel, headline (mark, project, cause) and the number of thread replies.
 */
function printPosted(stack: LocalStack, entry: LocalLogEntry): void {
  const kind = entry.message === 'digest posted' ? 'digest' : 'draft';
  const eventId = entry.fields['eventId'];
  const channels = Array.isArray(entry.fields['channels']) ? entry.fields['channels'].map(String) : [];
  const label = kind === 'digest' ? green('digest') : green('draft ');
  if (!stack.slack) {
    out(
      `${dim(clock(entry.at))} ${label}  ${typeof entry.fields['projectId'] === 'string' ? entry.fields['projectId'] : ''} → ${channels.join(', ')} ${dim('(posted to Slack)')}`,
    );
    return;
  }
  const slack = stack.slack;
  const messages = slack.messages().filter((m) => eventIdOf(m) === eventId);
  for (const channel of channels) {
    const own = messages.filter((m) => m.channel === slack.channelId(channel));
    const main = own.find(isTopLevel) ?? own[0];
    const replies =
      main && isTopLevel(main)
        ? slack.messages().filter((m) => m.channel === main.channel && m.thread_ts === main.ts && m.ts !== main.ts).length
        : 0;
    const where = main && !isTopLevel(main) ? "in the digest's thread" : `${replies} thread ${replies === 1 ? 'reply' : 'replies'}`;
    out(`${dim(clock(entry.at))} ${label}  #${slack.channelName(channel)}  ${bold(headlineOf(main?.text))}  ${dim(`· ${where}`)}`);
  }
}

/** Without --verbose: a top-level message that is no digest or draft notice (those get printPosted's line), one line. */
function printOtherMessage(stack: LocalStack | undefined, call: RecordedCall): void {
  const slack = stack?.slack;
  const message = slack?.messages().find((m) => m.ts === call.ts && m.channel === slack.channelId(call.channel ?? ''));
  if (!slack || !message || !isTopLevel(message) || eventIdOf(message) !== undefined) return;
  out(`${dim(clock(call.at))} ${'slack '}  #${slack.channelName(message.channel)}  ${headlineOf(message.text)}`);
}

const SECRET_NOTES: Record<LocalStack['secretsFrom'], string> = {
  options: '',
  kept: '  (kept from the last start)',
  generated: '  (generated; choose one with --secret)',
};

/** A path as typed in this directory when it is below it, else absolute. */
function shownPath(path: string): string {
  const below = relative(process.cwd(), path);
  return below === '' || below.startsWith('..') ? resolve(path) : below;
}

function printBanner(stack: LocalStack, readyMs: number, args: Args): void {
  const names = new Map((stack.simulator?.data.projects() ?? []).map((p) => [p.id, `${p.name} (${p.industry})`]));
  const rows: [string, string][] = [
    ['Webhook URL', stack.webhookUrl],
    ...stack.secrets.map((s, i): [string, string] => [
      i === 0 ? 'Signing secret' : '',
      `${s}${i === 0 ? dim(SECRET_NOTES[stack.secretsFrom]) : ''}`,
    ]),
    stack.simulator
      ? ['Simulator', `${stack.simulatorUrl}  ${dim('API key')} ${stack.apiKey}`]
      : ['Read API', `${stack.simulatorUrl} ${dim('(real service; register the webhook URL there: it must be public HTTPS)')}`],
    stack.slack
      ? [
          'Slack',
          `local Web API ${stack.slack.apiUrl} → #${stack.slack.channelName(stack.slackChannel)} (${stack.slackChannel}) ${dim(args.verbose ? '(messages print below in full)' : '(one line per digest below; in full in the preview)')}`,
        ]
      : ['Slack', `real workspace → ${stack.slackChannel}`],
    ['DynamoDB', `${stack.dynamo.endpoint}  ${dim('table')} ${stack.dynamo.tableName}`],
    ['SQS', `${stack.sqs.queueUrl}  ${dim('DLQ')} ${stack.sqs.dlqUrl}`],
    ['', `${stack.sqs.commandsQueueUrl}  ${dim('DLQ')} ${stack.sqs.commandsDlqUrl}  ${dim('(slash commands)')}`],
  ];
  if (stack.gateway.previewUrl !== undefined)
    rows.push(['Slack preview', `${stack.gateway.previewUrl}  ${dim('(open in a browser: every message as Slack shows it, live)')}`]);
  if (stack.workspacesUrl !== undefined)
    rows.push(['Workspaces', `${stack.workspacesUrl}  ${dim('(each local Slack workspace, and Add to Slack)')}`]);
  stack.connections.forEach((c, i) =>
    rows.push([
      i === 0 ? 'Connections' : '',
      `${bold(c.id)}  ${c.webhookUrl}  ${dim('→')} ${c.slackTeamName} (${c.slackTeamId}) #${stack.slack?.channelName(c.slackChannel) ?? c.slackChannel}  ${dim(`${c.projectIds.length} projects, simulator ${c.simulatorUrl}`)}`,
    ]),
  );
  rows.push([
    'Slack app',
    `${stack.webhookUrl.replace(HTTP_PATHS.webhook, HTTP_PATHS.slackCommands)}  ${dim('(/visibility: type it in the preview, or npx bridge slack command)')}`,
  ]);
  if (stack.events) rows.push(['Events', `${stack.events.eventsUrl}  ${dim('(NDJSON; npx bridge tail)')}`]);
  if (stack.secretsManager)
    rows.push([
      'Secrets Manager',
      `${stack.secretsManager.server.url}  ${dim('(signing secrets, read-API key, Slack token; re-read every 2 s)')}`,
    ]);
  if (args.slackLog !== undefined && stack.slack) rows.push(['Slack log', args.slackLog]);
  rows.push([
    'State',
    `kept in ${shownPath(args.dataDir)}/ across restarts ${dim('(table, queues, secrets, Slack messages; --fresh starts clean)')}`,
  ]);
  rows.push(['Ready file', relative(process.cwd(), args.readyFile) || args.readyFile]);
  out(`${bold('visibility-slack-bridge')} — local stack ready in ${(readyMs / 1000).toFixed(1)} s`);
  out();
  for (const [label, value] of rows) out(`  ${label.padEnd(15)} ${value}`);
  out(`  Projects${stack.projectIds.length === 0 ? `${' '.repeat(8)}${dim('(none listed)')}` : ''}`);
  for (const id of stack.projectIds) out(`    ${id}${names.has(id) ? `  ${names.get(id)}` : ''}`);
  printTryIt(stack, args);
  out(dim('  Ctrl-C stops everything.'));
}

/** Exact commands to paste into another terminal; --local only when the ready file is not the default. */
function printTryIt(stack: LocalStack, args: Args): void {
  const local = resolve(args.readyFile) === DEFAULT_READY_FILE ? '' : ` --local ${args.readyFile}`;
  const project = stack.projectIds[0];
  out();
  out(bold('  Try it') + dim(' (in another terminal, in this directory):'));
  out(
    `    npx bridge trigger run.completed${local}${project !== undefined ? ` --project ${project}` : ''}  ${dim(stack.simulator ? "(the simulator finishes the project's next run and delivers it)" : '(a signed fixture)')}`,
  );
  const client = stack.connections[0];
  if (client !== undefined)
    out(`    npx bridge trigger run.completed --connection ${client.id}${local}  ${dim('(its simulator delivers to its webhook)')}`);
  for (const command of ['dlq stats', 'dlq peek', 'tail', 'doctor', 'secrets signing list']) out(`    npx bridge ${command}${local}`);
  out(`    npx bridge slack command "/visibility help" --channel ${LOCAL_DEFAULTS.demoChannel}${local}`);
}

/** Another running `npm start` owns this ready file: refuse rather than overwrite it. */
function checkReadyFileFree(file: string): void {
  let pid: unknown;
  try {
    pid = (JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown }).pid;
  } catch {
    return; // absent or unreadable: ours to write
  }
  // Not ours, and not left by a stack that is gone.
  if (typeof pid !== 'number' || pid === process.pid || !isAlive(pid)) return;
  throw new UsageError(
    `${file} belongs to another running local stack (pid ${pid}); for a second one pass --ready-file FILE and --port 0 --simulator-port 0`,
  );
}

function writeReadyFile(file: string, stack: LocalStack): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    writeJson(file, stack.readyInfo(), 2);
  } catch (error) {
    throw new LocalStackError(`cannot write the ready file ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Main
// ---------------------------------------------------------------------------------------------------

async function main(argv: string[]): Promise<void> {
  const args = parse(argv);
  const slackEnv = envPair('SLACK_BOT_TOKEN', 'SLACK_CHANNEL');
  if (slackEnv && !isHomeChannelId(slackEnv[1])) throw new UsageError(`SLACK_CHANNEL ${CHANNEL_ID_HINT}; got "${slackEnv[1]}"`);
  const apiEnv = envPair('VISIBILITY_API_BASE_URL', 'VISIBILITY_API_KEY');
  if (apiEnv && !/^https?:\/\/[^/]/.test(apiEnv[0])) {
    throw new UsageError(`VISIBILITY_API_BASE_URL must be an absolute http(s) URL such as https://api.example.com, got "${apiEnv[0]}"`);
  }
  checkReadyFileFree(args.readyFile);

  const running: { stack?: LocalStack } = {};
  let stopping = false;
  let readyFileWritten = false;
  const shutdown = (): void => {
    if (stopping) {
      process.stderr.write('Forced exit.\n');
      process.exit(1);
    }
    stopping = true;
    const stack = running.stack;
    if (!stack) return; // still starting: closed as soon as the start finishes
    out(dim('\nShutting down…'));
    const force = setTimeout(() => {
      process.stderr.write(`Shutdown took longer than ${SHUTDOWN_TIMEOUT_MS / 1000} s; exiting.\n`);
      process.exit(1);
    }, SHUTDOWN_TIMEOUT_MS);
    force.unref();
    void stack.close().finally(() => {
      if (readyFileWritten) rmSync(args.readyFile, { force: true });
      out(dim('Stopped.'));
      process.exit(0);
    });
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);

  const options: LocalStackOptions = {
    port: args.port,
    ...(args.secret ? { secrets: args.secret } : {}),
    ...(args.connections > 0 ? { connections: args.connections } : {}),
    simulatorPort: args.simulatorPort ?? SIMULATOR_PORT,
    secretsManagerPort: args.secretsManagerPort,
    eventsPort: args.eventsPort,
    simulatorPortFallback: args.simulatorPort === undefined,
    retryScale: 1,
    logLevel: args.verbose ? 'info' : 'warn',
    logWrite: (line) => process.stderr.write(`${dim(line)}\n`),
    // Skipped runs are info lines: one line each in this terminal all the same.
    logHighlight: SKIP_MESSAGES,
    onDelivery: printDelivery,
    onSlackMessage: (rendered, call) =>
      args.verbose ? printSlackMessage(rendered, call.thread_ts !== undefined) : printOtherMessage(running.stack, call),
    ...(args.fixture !== undefined ? { fixture: args.fixture } : {}),
    ...(args.apiLatency !== undefined ? { apiLatencyMs: args.apiLatency } : {}),
    env: {
      [ENV.digestMode]: args.digestMode,
      // The PNG fallback on (a stage's chartsEnabled, off by default): with --refuse-native-blocks the thread gets the PNG.
      [ENV.chartsEnabled]: 'true',
      ...(args.dashboardUrl !== undefined ? { [ENV.dashboardUrlTemplate]: args.dashboardUrl } : {}),
    },
    // The topology's quiet-hours schedule (local/topology.ts: faster than deployed, so a catch-up shows soon after its window).
    quietSweepMs: LOCAL_TOPOLOGY.schedules.quietCatchUp.everyMinutes * 60_000,
    dataDir: args.dataDir,
    fresh: args.fresh === true,
    ...(args.refuseNativeBlocks ? { refuseNativeBlocks: true } : {}),
    ...(args.slackLog !== undefined ? { slackLogFile: args.slackLog } : {}),
    ...(slackEnv ? { realSlack: { token: slackEnv[0], channel: slackEnv[1] } } : {}),
    ...(apiEnv ? { realReadApi: { baseUrl: apiEnv[0], apiKey: apiEnv[1] } } : {}),
  };
  const stack = await startLocalStack(options);
  running.stack = stack;
  if (!args.verbose)
    stack.observability.subscribe((entry) => {
      if (entry.message === 'digest posted' || entry.message === 'draft notice posted') printPosted(stack, entry);
    });
  const readyMs = performance.now();
  if (stopping) {
    stopping = false;
    shutdown();
    return;
  }
  try {
    writeReadyFile(args.readyFile, stack);
    readyFileWritten = true;
  } catch (error) {
    await stack.close();
    throw error;
  }
  printBanner(stack, readyMs, args);
  if (args.slackLog !== undefined && !stack.slack)
    process.stderr.write(
      `${yellow('note:')} --slack-log only records calls to the local Slack server; it is not used with a real Slack.\n`,
    );

  if (args.demo) printDemo(stack, await sendDemoRun(stack));
}

function printDemo(stack: LocalStack, demo: DemoRunOutcome): void {
  if (!demo.sent) {
    if (demo.reason === 'real_read_api') out(dim('\n(no demo: the read API is the real service, so runs come from it)'));
    if (demo.reason === 'sent_before') out(dim('\n(no demo: it was sent on an earlier start; --fresh starts clean)'));
    return;
  }
  const { run } = demo;
  const name = stack.simulator?.data.projects().find((p) => p.id === run.run.projectId)?.name ?? run.run.projectId;
  out();
  if (demo.history.seeded)
    out(`Demo: ${bold(name)} starts with 8 weeks of history (${demo.history.runs} daily runs), so its digest has a trend chart.`);
  out(
    `Demo: the simulator finished run ${run.run.runId.slice(0, 8)} of ${bold(name)} and sent run.completed ${run.event.id.slice(0, 8)} (signed) to the webhook…`,
  );
}

/** One line on stderr (the stack trace too with --verbose, for unexpected errors), then exit 1. */
function fail(error: unknown): never {
  const message = error instanceof Error ? error.message : String(error);
  const hint = error instanceof UsageError ? ' (see npm start -- --help)' : '';
  process.stderr.write(`${red('error:')} ${message.split('\n')[0] ?? message}${hint}\n`);
  const expected = error instanceof UsageError || error instanceof LocalStackError;
  if (!expected && process.argv.includes('--verbose') && error instanceof Error && error.stack) process.stderr.write(`${error.stack}\n`);
  process.exit(1);
}

// A local server failing outside any request (e.g. inside dynalite) ends the run with one line too.
process.on('uncaughtException', fail);
// Output piped into something that stopped reading (e.g. `| head`) is not a reason to stop the bridge.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error) => {
    if ((error as { code?: unknown }).code !== 'EPIPE') fail(error);
  });
}
main(process.argv.slice(2)).catch(fail);
