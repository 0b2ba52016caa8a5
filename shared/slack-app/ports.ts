/**
 * Ports of the Slack app (slash commands, buttons, routing, pacing). Declared here for now; the
 * adapters live in shared/adapters (DynamoDB) and the wiring phase passes the read-API client and
 * a response_url poster.
 */
import type { Project, VisibilityOverview } from '../read-api-types';
import type { DeferredSlackCommand } from './service';
import type { SlotRequest } from './pacing';

/** The digest modes of the digest issue: `changes` posts one compact line when nothing moved. */
export type DigestMode = 'full' | 'changes';
export const DIGEST_MODES: readonly DigestMode[] = ['full', 'changes'];

/** Who did something in Slack. */
export interface Actor {
  userId: string;
  userName?: string | undefined;
}

/** One project ↔ channel subscription with its settings and the last change made to it. */
export interface Subscription {
  projectId: string;
  /** The project's name when subscribed: lets `list`, `mute`, … answer without the read API. */
  projectName: string;
  channel: string;
  mode: DigestMode;
  /** Epoch ms until which digests to this channel are skipped; absent when not muted. */
  mutedUntilMs?: number | undefined;
  createdBy: string;
  createdAtMs: number;
  changedBy: string;
  changedAtMs: number;
  /** Human summary of the last change, e.g. "muted for 7d" — shown on digests and in `list`. */
  lastChange: string;
}

export type SettingsChange = { kind: 'mute'; untilMs: number; label: string } | { kind: 'unmute' } | { kind: 'mode'; mode: DigestMode };

export interface NewSubscription {
  projectId: string;
  projectName: string;
  channel: string;
  actor: Actor;
  nowMs: number;
  mode?: DigestMode | undefined;
  mutedUntilMs?: number | undefined;
  lastChange?: string | undefined;
}

export type SubscribeResult = { status: 'subscribed'; subscription: Subscription } | { status: 'already'; subscription: Subscription };

/** Many-to-many project ↔ channel subscriptions. Errors of the backing store propagate (the caller retries). */
export interface SubscriptionStore {
  /** Adds the subscription; an existing one keeps its settings (`already`). */
  subscribe(input: NewSubscription): Promise<SubscribeResult>;
  /** false when the channel was not subscribed to the project. */
  unsubscribe(projectId: string, channel: string): Promise<boolean>;
  /** Applies the change; null when the channel is not subscribed to the project. */
  change(projectId: string, channel: string, change: SettingsChange, actor: Actor, nowMs: number): Promise<Subscription | null>;
  /** Every channel subscribed to the project (digest routing). */
  forProject(projectId: string): Promise<Subscription[]>;
  /** Every project the channel subscribes (`list`). */
  forChannel(channel: string): Promise<Subscription[]>;
  /** Every subscription (`bridge subscriptions list`); a full scan, for operators only. */
  listAll(): Promise<Subscription[]>;
}

/** What the read key can see (`GET /v1/projects`). */
export interface ProjectDirectory {
  listProjects(): Promise<Project[]>;
}

/** The current figures of a project (`GET /v1/projects/{id}/visibility`), for `status`. */
export interface StatusSource {
  getVisibility(projectId: string): Promise<VisibilityOverview>;
}

/** A message for Slack's response_url (or the body of a slash-command acknowledgement). */
export interface SlackReply {
  response_type: 'ephemeral' | 'in_channel';
  text: string;
  blocks?: unknown[] | undefined;
  /** Interactions only: replace the message the button was on. */
  replace_original?: boolean | undefined;
}

/** Posts to a response_url (valid 30 minutes, up to 5 times). Throws when Slack does not accept it. */
export interface Responder {
  respond(responseUrl: string, reply: SlackReply): Promise<void>;
}

/** A reservation of a channel's next posting slot. */
export type PaceDecision =
  /** Post after waiting `waitMs` (0: now). The slot is reserved. */
  | { status: 'reserved'; waitMs: number }
  /** The wait would exceed the caller's budget: nothing reserved; hand the work back for `retryAfterMs`. */
  | { status: 'deferred'; retryAfterMs: number };

/** Paces posts per channel (Slack allows about one message per second per channel). */
export interface ChannelPacer {
  /** The time one post occupies in a channel. */
  readonly intervalMs: number;
  /** The channel's next slot(s) (see SlotRequest); the decision's wait is for the first. */
  reserve(channel: string, nowMs: number, maxWaitMs: number, request?: SlotRequest): Promise<PaceDecision>;
}

/** A store operation failed for a reason other than the data (throttling, network, permissions); `cause` has the SDK error. */
export class SlackAppStoreError extends Error {
  override name = 'SlackAppStoreError';
  constructor(operation: string, options: { cause: unknown }) {
    super(`${operation} failed: ${options.cause instanceof Error ? options.cause.name : 'unknown error'}`, options);
  }
}

/** The digest queue as the Slack endpoints see it: deferred commands go there, answered by the digest worker. */
export interface DeferredCommandQueue {
  send(message: DeferredSlackCommand): Promise<void>;
}
