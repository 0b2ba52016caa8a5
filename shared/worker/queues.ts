/**
 * The digest function's two queues (two event sources of one function): the kinds each carries, each
 * with its feature's handler and the part of the queue's deps that handler takes. A record of a kind
 * its queue does not carry never reaches a handler (./batch.ts quarantines it).
 */
import type { KindHandler } from '../queue-work';
import type { DigestDeps } from '../digest/deps';
import { noticeDrafts } from '../digest/draft-ready';
import { catchUpHeldDigests, type CatchUpSweepDeps } from '../digest/quiet-catch-up';
import { digestRuns } from '../digest/run-completed';
import { answerDeferredCommands } from '../slack-app/deferred-kind';
import type { DeferredDeps } from '../slack-app/ports';
import { publishHomes, type HomeDeps } from '../slack-app/home/publish';
import { sweepWeeklyReports, type WeeklySweepKindDeps } from '../weekly/sweep-kind';
import type { Queue } from './batch';
import { perConnection, thenWatchConnections, type ConnectionDigests } from './connections';

/** What the digest queue's kinds need: each feature's own deps. */
export interface DigestQueueDeps {
  digest: DigestDeps;
  weekly: WeeklySweepKindDeps;
  catchUp: CatchUpSweepDeps;
  /** Events of connections (`/webhook/<id>`): their read API and routes; none = the stack's own webhook only. */
  connections?: ConnectionDigests | undefined;
  /** The connections' silence watchdog, run after each weekly sweep; none = no connections wiring. */
  watchConnections?: (() => Promise<void>) | undefined;
}

/** What the commands queue's kinds need: deferred commands, and App Home publishes (a deferred subscribe among them). */
export interface CommandQueueDeps {
  commands: DeferredDeps;
  home: HomeDeps;
}

/** A feature's handler on a queue: it is given its own part of the queue's deps. */
function taking<P, F, D>(handler: KindHandler<P, F>, part: (deps: D) => F): KindHandler<P, D> {
  return (items, deps, settle) => handler(items, part(deps), settle);
}

export const DIGEST_QUEUE: Queue<'digest', DigestQueueDeps> = {
  name: 'digest',
  handlers: {
    'run.completed': perConnection(digestRuns, { cadence: true }),
    'draft.ready': perConnection(noticeDrafts, { cadence: false }),
    weekly_sweep: thenWatchConnections(taking(sweepWeeklyReports, (deps: DigestQueueDeps) => deps.weekly)),
    quiet_catch_up: taking(catchUpHeldDigests, (deps: DigestQueueDeps) => deps.catchUp),
  },
};

export const COMMAND_QUEUE: Queue<'commands', CommandQueueDeps> = {
  name: 'commands',
  handlers: {
    slack_command: taking(answerDeferredCommands, (deps: CommandQueueDeps) => deps.commands),
    slack_home: taking(publishHomes, (deps: CommandQueueDeps) => deps.home),
  },
};
