/**
 * Ports: what the domain code needs from the outside world. Adapters in shared/adapters wrap the
 * AWS and Slack clients; tests and the local stack pass the same adapters pointed at local peers.
 */
import type { QueuedEvent } from './events';

/** Wall clock in epoch milliseconds. */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export type DeliveryClaim =
  | { status: 'claimed'; token: string }
  | { status: 'completed' }
  | { status: 'in_progress'; retryAfterSeconds: number };

/** De-duplication records for webhook deliveries, keyed by the signed event id. */
export interface DeliveryStore {
  /** Claims the delivery for this invocation, or says why it can't be claimed. */
  claim(eventId: string, nowMs: number): Promise<DeliveryClaim>;
  /** Marks the delivery enqueued. Only the holder of `token` can complete it. */
  complete(eventId: string, token: string, nowMs: number): Promise<void>;
  /** Gives the claim back so that the sender's retry can enqueue it. */
  release(eventId: string, token: string): Promise<void>;
}

/** The queue between ingest and digest. */
export interface EventQueue {
  send(message: QueuedEvent): Promise<void>;
}
