/** A digest event's claim (exactly-once posting, ./fan-out.ts), and what every digest event reads first: its project. */
import { DIGEST_METRICS } from '../contracts';
import type { WebhookEvent } from '../events';
import { RateLimited } from '../errors';
import { describeError } from '../observability';
import type { DigestClaim } from '../ports';
import type { Project } from '../read-api-types';
import type { RecordResult } from '../queue-work';
import type { DigestDeps } from './deps';
import { ClaimBusyError } from './failures';
import { failureText } from './fan-out';

export type Claimed = Extract<DigestClaim, { status: 'claimed' }>;

/** Claims the event for posting; undefined when it needs no work (already posted or skipped). */
export async function claimFor(event: WebhookEvent, deps: DigestDeps): Promise<Claimed | undefined> {
  const claim = await deps.store.claim(event.id, deps.clock.now());
  if (claim.status === 'busy') throw new ClaimBusyError(claim.retryAfterSeconds);
  if (claim.status === 'done') {
    deps.log.info('event already handled; nothing posted', { eventId: event.id, outcome: claim.outcome });
    deps.metrics.count(DIGEST_METRICS.eventDuplicate);
    return undefined;
  }
  return claim;
}

/** Runs `work` under the claim; on failure the lease ends early so the retry needn't wait for it. */
export async function underClaim<T>(event: WebhookEvent, token: string, deps: DigestDeps, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    try {
      await deps.store.release(event.id, token, failureText(error));
    } catch (releaseError) {
      deps.log.warn('could not release the posting claim; it expires with its lease', {
        eventId: event.id,
        ...describeError(releaseError),
      });
    }
    throw error;
  }
}

/** Every channel of the project muted it or refuses posts (and there is no home channel, or it muted it too): nothing to post or read. */
export async function finishUnrouted(event: WebhookEvent, claim: Claimed, deps: DigestDeps): Promise<RecordResult> {
  await deps.store.finish(event.id, claim.token, 'skipped');
  deps.log.info('digest posted nowhere: every channel of the project muted it or refuses posts', { eventId: event.id });
  // A handled run for the UndeliveredDigests alarm (drafts are not counted as accepted runs).
  if (event.type === 'run.completed') deps.metrics.count(DIGEST_METRICS.runMuted);
  return 'muted';
}

/** The project with its name, or with its id as the name when /v1/projects fails (a rate limit retries). */
export async function projectOrId(projectId: string, event: WebhookEvent, deps: DigestDeps): Promise<Project> {
  try {
    return projectNamed(await deps.readApi.listProjects(), projectId);
  } catch (error) {
    if (error instanceof RateLimited) throw error;
    deps.log.warn('project name unavailable; the message shows the project id', { eventId: event.id, ...describeError(error) });
    return { id: projectId, name: projectId, industry: null };
  }
}

function projectNamed(projects: readonly Project[], projectId: string): Project {
  return projects.find((p) => p.id === projectId) ?? { id: projectId, name: projectId, industry: null };
}
