/**
 * `npm run simulator` — runs the visibility-service simulator, or triggers events on a running one.
 * See `npm run simulator -- --help`.
 */
import { Command, InvalidArgumentError } from 'commander';
import { loadFixtureFile } from './fixture';
import { DEFAULT_API_KEY, VisibilitySimulator, type RateLimit } from './server';

export const DEFAULT_PORT = 8788;

class UsageError extends Error {}

function wholeNumber(min: number): (value: string) => number {
  return (value) => {
    if (!/^\d+$/.test(value) || Number(value) < min) throw new InvalidArgumentError(`must be a whole number >= ${min}`);
    return Number(value);
  };
}

function rateLimit(value: string): RateLimit {
  const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(value.trim());
  const requests = Number(match?.[1]);
  const perSeconds = Number(match?.[2]);
  if (match === null || !(requests >= 1) || !(perSeconds > 0)) {
    throw new InvalidArgumentError('must look like N/S (requests per seconds), e.g. 10/1');
  }
  return { requests, perSeconds };
}

function retryScale(value: string): number {
  if (!(Number(value) >= 0)) throw new InvalidArgumentError('must be a number >= 0');
  return Number(value);
}

interface ServeOptions {
  port: number;
  host: string;
  apiKey: string;
  latency: number;
  fixture?: string;
  seed: number;
  rateLimit?: RateLimit;
  webhook: string[];
  webhookSecret?: string;
  retryScale: number;
}

async function serve(options: ServeOptions): Promise<void> {
  const simulator = await VisibilitySimulator.start({
    port: options.port,
    host: options.host,
    apiKey: options.apiKey,
    latencyMs: options.latency,
    rateLimit: options.rateLimit ?? null,
    seed: options.seed,
    webhooks: { retryScale: options.retryScale },
    ...(options.fixture === undefined ? {} : { fixture: loadFixtureFile(options.fixture) }),
  });
  const lines = [
    `Visibility simulator listening on ${simulator.url}`,
    `API key: ${simulator.apiKey}`,
    'Projects:',
    ...simulator.data.projects().map((p) => `  ${p.id}  ${p.name} (${p.industry})`),
  ];
  for (const url of options.webhook) {
    const secret = options.webhookSecret;
    const created = simulator.webhooks.addWebhookWithSecret({ url, ...(secret === undefined ? {} : { secret }) });
    lines.push(`Webhook ${created.id} → ${url} (secret: ${created.secret})`);
  }
  lines.push(`Trigger a run: npm run simulator -- trigger-run --url ${simulator.url} --project <id>`);
  process.stdout.write(`${lines.join('\n')}\n`);
  const shutdown = (): void => void simulator.close().then(() => process.exit(0));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

interface TriggerOptions {
  url: string;
  apiKey: string;
  project: string;
  duplicates: number;
  outOfOrder?: boolean;
  wait?: boolean;
}

async function trigger(kind: 'runs' | 'drafts', options: TriggerOptions): Promise<void> {
  const base = options.url.replace(/\/+$/, '');
  const body = {
    project_id: options.project,
    duplicates: options.duplicates,
    ...(options.outOfOrder === true ? { out_of_order: true } : {}),
    wait: options.wait === true,
  };
  let response: Response;
  try {
    response = await fetch(`${base}/_sim/${kind}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${options.apiKey}`, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : '';
    throw new UsageError(`Cannot reach the simulator at ${base}${cause}; is it running (npm run simulator)?`);
  }
  const text = await response.text();
  if (!response.ok) throw new UsageError(`Simulator answered ${response.status}: ${text}`);
  process.stdout.write(`${text}\n`);
}

const program = new Command('simulator')
  .enablePositionalOptions()
  .description('Visibility-service simulator: start it, or finish a run / send draft.ready on a running one')
  .option('--port <n>', 'port to listen on (0 = any free port)', wholeNumber(0), DEFAULT_PORT)
  .option('--host <host>', 'address to bind', '127.0.0.1')
  .option('--api-key <key>', 'API key clients must send as "Authorization: Bearer KEY"', DEFAULT_API_KEY)
  .option('--latency <ms>', 'delay added to every request', wholeNumber(0), 0)
  .option('--fixture <file>', 'serve the projects of this JSON fixture (local/simulator/fixture.ts) instead of generated data')
  .option('--seed <n>', 'seed of the generated data; the same seed gives the same data', wholeNumber(0), 1)
  .option('--rate-limit <n/s>', 'answer 429 rate_limited beyond N requests per S seconds, e.g. 10/1', rateLimit)
  .option('--webhook <url>', 'register a webhook receiver at start (repeatable)', (url: string, urls: string[]) => [...urls, url], [])
  .option('--webhook-secret <secret>', 'signing secret of the --webhook receivers (default: generated and printed)')
  .option('--retry-scale <x>', 'multiply the webhook retry delays (30 s … 8 min) by X', retryScale, 1)
  .addHelpText(
    'after',
    '\nControl routes (Bearer auth): POST /_sim/runs, POST /_sim/drafts, POST|GET /_sim/webhooks, GET /_sim/webhooks/{id}/attempts.',
  )
  .action((options: ServeOptions) => serve(options));

for (const [name, kind, what] of [
  ['trigger-run', 'runs', 'finish a run on a running simulator (sends run.completed)'],
  ['trigger-draft', 'drafts', 'send draft.ready from a running simulator'],
] as const) {
  const command = program
    .command(name)
    .description(what)
    .option('--url <url>', 'simulator base URL', `http://127.0.0.1:${DEFAULT_PORT}`)
    .option('--api-key <key>', "the simulator's API key", DEFAULT_API_KEY)
    .requiredOption('--project <id>', 'project id (printed by the simulator at start)')
    .option('--duplicates <n>', 'send the delivery N extra times', wholeNumber(0), 0)
    .option('--wait', 'wait for the deliveries and print their report');
  if (kind === 'runs') command.option('--out-of-order', 'two runs, the newer delivered first');
  command.action((options: TriggerOptions) => trigger(kind, options));
}

program.parseAsync(process.argv).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message}\nRun with --help for usage.\n`);
  process.exitCode = 1;
});
