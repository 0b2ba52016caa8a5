/** Ports of the digest worker beyond the read API and Slack (which live in their own modules). */
import type { ProjectSnapshot } from './snapshot';

/** What has been posted for one event so far, so a retry continues instead of posting again. */
export interface PostingProgress {
  channel?: string;
  /** ts of the top-level message once it is posted. */
  mainTs?: string;
  /** Thread replies already posted under mainTs. */
  repliesPosted: number;
}

export type DigestClaim =
  | {
      status: 'claimed';
      token: string;
      progress: PostingProgress;
      /** 1 on the first claim of the event; more when an earlier attempt failed or died. */
      attempt: number;
      /** When the event was first claimed (epoch ms): posts of earlier attempts are not older. */
      firstClaimedMs: number;
    }
  | { status: 'done'; outcome: 'posted' | 'skipped' }
  | { status: 'busy'; retryAfterSeconds: number };

/** Posting claims (`digest#<event id>`) and per-project snapshots (`snapshot#<project id>`). */
export interface DigestStore {
  claim(eventId: string, nowMs: number): Promise<DigestClaim>;
  recordProgress(eventId: string, token: string, progress: PostingProgress): Promise<void>;
  finish(eventId: string, token: string, outcome: 'posted' | 'skipped'): Promise<void>;
  /** Ends the lease early (after a failure) but keeps the progress for the retry. */
  release(eventId: string, token: string): Promise<void>;
  /**
   * Records `createdAtMs` as the newest run of the project taken up for a digest, unless a newer
   * one already was: false means this run is superseded. Checked before any read or post, so two
   * invocations digesting runs of one project side by side cannot both post.
   */
  markNewestRun(projectId: string, createdAtMs: number, eventId: string): Promise<boolean>;
  getSnapshot(projectId: string): Promise<ProjectSnapshot | null>;
  /** Stores the snapshot unless a newer one (by lastCreatedAt) is already there. */
  putSnapshot(snapshot: ProjectSnapshot): Promise<void>;
}
