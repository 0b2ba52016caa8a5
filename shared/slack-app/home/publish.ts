/**
 * The queue's `slack_home` kind (the commands queue): publishes a user's App Home portfolio, after
 * subscribing a channel when the tab asked for it. The subscribe is `/visibility subscribe`'s own
 * (../handlers.ts `answerSubscribe`: the project's `changeChannels`, whether the bot can post there),
 * after the same check of who may change; its answer is shown at the top of the re-published tab.
 */
import { QUEUE_MESSAGE_KINDS, SLACK_APP_METRICS } from '../../contracts';
import { Unavailable } from '../../errors';
import { describeError } from '../../observability';
import { eachAlone, type KindHandler, type RecordResult, type WorkLabel } from '../../queue-work';
import { isRecord } from '../../util';
import { refuse } from '../access';
import { answerSubscribe } from '../handlers';
import { unavailableReply } from '../replies';
import { authorizeUser } from '../policy';
import type { DeferredDeps } from '../ports';
import { loadPortfolio, type PortfolioDeps } from './portfolio';
import type { HomeRequest, HomeSubscribe, HomeViews } from './ports';
import { renderHomeView } from './view';
import { deferredDepsOf } from '../service';
import { parseTenants } from '../tenant-scope';

/** A deferred command's deps (the subscribe is one), the digest's routing and snapshots, and the publisher. */
export interface HomeDeps extends DeferredDeps {
  views: HomeViews;
  routing: PortfolioDeps['routing'];
  snapshots: PortfolioDeps['snapshots'];
  /** Channels' quiet hours, to say which are quiet now; none = never quiet. */
  quiet?: PortfolioDeps['quietHours'];
}

export const publishHomes: KindHandler<HomeRequest, HomeDeps> = eachAlone(publishHome);

/** A publish is of use while the user looks at the tab; past this, a retry would only show a stale page. */
const HOME_REQUEST_LIFETIME_MS = 10 * 60_000;

export function homeLabel(request: HomeRequest): WorkLabel {
  return { id: `home@${request.userId}`, type: QUEUE_MESSAGE_KINDS.slackHome };
}

async function publishHome(request: HomeRequest, unscoped: HomeDeps): Promise<RecordResult> {
  // The tab shows (and subscribes) only the projects of the user's workspace's tenants.
  const deps = await deferredDepsOf(
    { channel: '', actor: { userId: request.userId }, responseUrl: '', tenants: request.tenants },
    unscoped,
  );
  const notice = request.subscribe === undefined ? undefined : await subscribeFromHome(request, request.subscribe, deps);
  const canChange = (await authorizeUser(request.userId, deps.access.changes, deps.groups)).allowed;
  try {
    const entries = await loadPortfolio({
      ...deps,
      quietHours: deps.quiet,
      noiseMinimums: deps.statusOptions?.noiseMinimums,
    });
    await deps.views.publish(request.userId, renderHomeView(entries, { page: request.page, canChange, notice, nowMs: deps.clock.now() }));
  } catch (error) {
    deps.metrics.count(SLACK_APP_METRICS.slackResponseFailed);
    if (deps.clock.now() - request.receivedAtMs < HOME_REQUEST_LIFETIME_MS)
      throw new Unavailable('the App Home portfolio could not be built or published', { cause: error });
    deps.log.error('App Home left unpublished: the request is too old to retry', { user: request.userId, ...describeError(error) });
    return 'expired';
  }
  deps.metrics.count(SLACK_APP_METRICS.slackCommandAnswered);
  return 'answered';
}

/** The subscribe's answer, as `/visibility subscribe` gives it (a refusal included), for the top of the tab. */
async function subscribeFromHome(request: HomeRequest, { projectId, channel }: HomeSubscribe, deps: HomeDeps): Promise<string> {
  const decision = await authorizeUser(request.userId, deps.access.changes, deps.groups);
  if (!decision.allowed) return refuse(decision.refusal, deps).text;
  const context = { channel, actor: { userId: request.userId }, responseUrl: '' };
  try {
    return (await answerSubscribe({ kind: 'subscribe', project: projectId }, context, deps)).text;
  } catch (error) {
    deps.log.warn('subscribe from App Home failed', { projectId, channel, ...describeError(error) });
    return unavailableReply("The visibility service's read API or the bridge's table").text;
  }
}

/** Reads a queue message body as a Home publish; null when it is not one. */
export function parseHomeRequest(body: unknown): HomeRequest | null {
  if (!isRecord(body) || body['kind'] !== QUEUE_MESSAGE_KINDS.slackHome) return null;
  const { userId, page, subscribe, receivedAtMs } = body;
  if (typeof userId !== 'string' || userId === '' || typeof page !== 'number' || !Number.isSafeInteger(page) || page < 0) return null;
  const tenants = parseTenants(body['tenants']);
  if (body['tenants'] !== undefined && tenants === undefined) return null;
  const request: HomeRequest = {
    kind: QUEUE_MESSAGE_KINDS.slackHome,
    userId,
    page,
    receivedAtMs: Number(receivedAtMs) || 0,
    ...(tenants === undefined ? {} : { tenants }),
  };
  if (subscribe === undefined) return request;
  if (!isRecord(subscribe)) return null;
  const { projectId, channel } = subscribe;
  if (typeof projectId !== 'string' || projectId === '' || typeof channel !== 'string' || channel === '') return null;
  return { ...request, subscribe: { projectId, channel } };
}
