/**
 * `npm run simulator` — runs the visibility-service simulator, or triggers events on a running one.
 * See `npm run simulator -- --help`.
 */
import { parseArgs } from 'node:util';
import { loadFixtureFile, type SimulatorFixture } from './fixture';
import { DEFAULT_API_KEY, VisibilitySimulator, type RateLimit } from './server';

export const DEFAULT_PORT = 8788;

const HELP = `Visibility-service simulator

Usage:
  npm run simulator -- [options]                       start the simulator
  npm run simulator -- trigger-run --project ID [...]  finish a run on a running simulator (sends run.completed)
  npm run simulator -- trigger-draft --project ID [...] send draft.ready from a running simulator

Server options:
  --port N              port to listen on (default ${DEFAULT_PORT}; 0 = any free port)
  --host HOST           address to bind (default 127.0.0.1)
  --api-key KEY         API key clients must send as "Authorization: Bearer KEY" (default ${DEFAULT_API_KEY})
  --latency MS          delay added to every request (default 0)
  --fixture FILE        serve the projects of this JSON fixture instead of generated data
                        (format: SimulatorFixture in local/simulator/data.ts)
  --seed N              seed of the generated data (default 1); the same seed gives the same data
  --rate-limit N/S      answer 429 rate_limited beyond N requests per S seconds, e.g. 10/1
  --webhook URL         register a webhook receiver at start (repeatable)
  --webhook-secret S    signing secret of the --webhook receivers (default: generated and printed)
  --retry-scale X       multiply the webhook retry delays (30 s … 8 min) by X (default 1)

Trigger options:
  --url URL             simulator base URL (default http://127.0.0.1:${DEFAULT_PORT})
  --api-key KEY         the simulator's API key (default ${DEFAULT_API_KEY})
  --project ID          project id (printed by the simulator at start)
  --duplicates N        send the delivery N extra times
  --out-of-order        trigger-run only: two runs, the newer delivered first
  --wait                wait for the deliveries and print their report

Control routes (Bearer auth): POST /_sim/runs {project_id}, POST /_sim/drafts {project_id},
POST /_sim/webhooks {url, secret}, GET /_sim/webhooks, GET /_sim/webhooks/{id}/attempts.
`;

class UsageError extends Error {}

function integerFlag(name: string, value: string | undefined, fallback: number, min: number): number {
  if (value === undefined) return fallback;
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${name} must be a whole number >= ${min}, got "${value}"`);
  return Number(value);
}

function parseRateLimit(value: string | undefined): RateLimit | null {
  if (value === undefined) return null;
  const match = /^(\d+)\/(\d+(?:\.\d+)?)$/.exec(value.trim());
  const requests = Number(match?.[1]);
  const perSeconds = Number(match?.[2]);
  if (match === null || !(requests >= 1) || !(perSeconds > 0)) {
    throw new UsageError(`--rate-limit must look like N/S (requests per seconds), e.g. 10/1; got "${value}"`);
  }
  return { requests, perSeconds };
}

async function serve(argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      host: { type: 'string' },
      'api-key': { type: 'string' },
      latency: { type: 'string' },
      fixture: { type: 'string' },
      seed: { type: 'string' },
      'rate-limit': { type: 'string' },
      webhook: { type: 'string', multiple: true },
      'webhook-secret': { type: 'string' },
      'retry-scale': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  const retryScale = values['retry-scale'] === undefined ? 1 : Number(values['retry-scale']);
  if (!(retryScale >= 0)) throw new UsageError(`--retry-scale must be a number >= 0, got "${values['retry-scale']}"`);
  const fixture: SimulatorFixture | undefined = values.fixture === undefined ? undefined : loadFixtureFile(values.fixture);
  const simulator = await VisibilitySimulator.start({
    port: integerFlag('port', values.port, DEFAULT_PORT, 0),
    host: values.host ?? '127.0.0.1',
    apiKey: values['api-key'] ?? DEFAULT_API_KEY,
    latencyMs: integerFlag('latency', values.latency, 0, 0),
    rateLimit: parseRateLimit(values['rate-limit']),
    seed: integerFlag('seed', values.seed, 1, 0),
    webhooks: { retryScale },
    ...(fixture === undefined ? {} : { fixture }),
  });
  const lines = [
    `Visibility simulator listening on ${simulator.url}`,
    `API key: ${simulator.apiKey}`,
    'Projects:',
    ...simulator.data.projects().map((p) => `  ${p.id}  ${p.name} (${p.industry})`),
  ];
  for (const url of values.webhook ?? []) {
    const created = simulator.webhooks.addWebhookWithSecret({
      url,
      ...(values['webhook-secret'] === undefined ? {} : { secret: values['webhook-secret'] }),
    });
    lines.push(`Webhook ${created.id} → ${url} (secret: ${created.secret})`);
  }
  lines.push(`Trigger a run: npm run simulator -- trigger-run --url ${simulator.url} --project <id>`);
  process.stdout.write(`${lines.join('\n')}\n`);

  const shutdown = (): void => {
    void simulator.close().then(() => process.exit(0));
  };
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

async function trigger(kind: 'runs' | 'drafts', argv: string[]): Promise<void> {
  const { values } = parseArgs({
    args: argv,
    options: {
      url: { type: 'string' },
      'api-key': { type: 'string' },
      project: { type: 'string' },
      duplicates: { type: 'string' },
      'out-of-order': { type: 'boolean' },
      wait: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
  });
  if (values.help === true) {
    process.stdout.write(HELP);
    return;
  }
  if (values.project === undefined || values.project === '') throw new UsageError('--project ID is required');
  const base = (values.url ?? `http://127.0.0.1:${DEFAULT_PORT}`).replace(/\/+$/, '');
  const body = {
    project_id: values.project,
    duplicates: integerFlag('duplicates', values.duplicates, 0, 0),
    ...(kind === 'runs' && values['out-of-order'] === true ? { out_of_order: true } : {}),
    wait: values.wait === true,
  };
  let response: Response;
  try {
    response = await fetch(`${base}/_sim/${kind}`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${values['api-key'] ?? DEFAULT_API_KEY}`, 'Content-Type': 'application/json' },
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

async function main(argv: string[]): Promise<void> {
  const [first, ...rest] = argv;
  if (first === 'trigger-run') await trigger('runs', rest);
  else if (first === 'trigger-draft') await trigger('drafts', rest);
  else await serve(argv);
}

main(process.argv.slice(2)).catch((error: unknown) => {
  const message = error instanceof Error ? error.message : String(error);
  process.stderr.write(`${message}\nRun with --help for usage.\n`);
  process.exitCode = 1;
});
