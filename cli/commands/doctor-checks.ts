/**
 * `bridge doctor`'s checklist: a check and its outcome, how each prints, the exit code and JSON of a
 * run, and the read-API check both the stack's and a connection's doctor run.
 */
import { ReadApiClient, ReadApiUnavailableError, isReadApiError } from '../../shared/adapters/read-api';
import type { Output } from '../io';
import type { CommandResult } from '../result';

export type CheckStatus = 'ok' | 'fail' | 'warn' | 'skip';

/** A copy-pasteable command line for the given words (CommandContext.hint: same stack flags). */
export type Hint = (words: string) => string;
export const plainHint: Hint = (words) => `npx bridge ${words}`;

export interface Check {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  fix?: string;
}

export const HTTP_TIMEOUT_MS = 10_000;

const MARK: Record<CheckStatus, string> = { ok: '✓', fail: '✗', warn: '!', skip: '-' };

export function ok(id: string, title: string, detail: string): Check {
  return { id, title, status: 'ok', detail };
}
export function fail(id: string, title: string, detail: string, fix?: string): Check {
  return { id, title, status: 'fail', detail, ...(fix !== undefined ? { fix } : {}) };
}
export function warn(id: string, title: string, detail: string, fix?: string): Check {
  return { id, title, status: 'warn', detail, ...(fix !== undefined ? { fix } : {}) };
}
export function skip(id: string, title: string, detail: string): Check {
  return { id, title, status: 'skip', detail };
}

/** One line per check, and its fix under a failure or warning. */
export function say(out: Output, check: Check): void {
  out.say(`${MARK[check.status]} ${check.title}: ${check.detail}`);
  if (check.fix !== undefined && (check.status === 'fail' || check.status === 'warn')) out.say(`    fix: ${check.fix}`);
}

/** The closing line; exit 1 when any check failed (warnings don't fail). */
export function doctorResult(out: Output, checks: readonly Check[]): CommandResult {
  const failed = checks.filter((c) => c.status === 'fail').length;
  const warned = checks.filter((c) => c.status === 'warn').length;
  const passed = checks.filter((c) => c.status === 'ok').length;
  out.say('');
  out.say(
    failed === 0
      ? `all checks passed (${passed} ok${warned > 0 ? `, ${warned} warning(s)` : ''})`
      : `${failed} check(s) failed, ${passed} ok${warned > 0 ? `, ${warned} warning(s)` : ''}`,
  );
  return { exitCode: failed > 0 ? 1 : 0, json: { ok: failed === 0, failed, warnings: warned, checks } };
}

export async function checkReadApi(baseUrl: string, apiKey: string, fetchFn: typeof fetch, hint: Hint = plainHint): Promise<Check> {
  const id = 'read-api';
  const title = 'read-API key works';
  try {
    const client = new ReadApiClient({
      baseUrl,
      apiKey,
      timeoutMs: HTTP_TIMEOUT_MS,
      maxRateLimitRetries: 1,
      maxRateLimitWaitMs: 5_000,
      fetch: fetchFn,
    });
    const projects = await client.listProjects();
    return ok(id, title, `GET /v1/projects answered ${projects.length} project(s)`);
  } catch (err) {
    const fixKey = `create a read key on the service's Developers page (plan Grow or above) and run \`${hint('secrets set read-api-key --value-stdin')}\``;
    if (isReadApiError(err) && (err.status === 401 || err.status === 403)) {
      return fail(id, title, `the key is rejected (HTTP ${err.status}${err.code !== null ? ` ${err.code}` : ''})`, fixKey);
    }
    if (err instanceof ReadApiUnavailableError)
      return fail(id, title, `cannot reach ${baseUrl}: ${err.message}`, 'check ReadApiBaseUrl and network egress');
    return fail(id, title, err instanceof Error ? err.message : String(err), 'check ReadApiBaseUrl; the service may be down');
  }
}
