/** The connections' port: their non-secret fields in the table (adapters/dynamo-connection-store.ts). */
import type { Connection } from './model';

/** What the watchdog keeps of a connection's cadence: its recent run times, and the silence it last told about. */
export interface ConnectionCadence {
  /** `created_at` of its latest runs (ms), oldest first, at most `RUN_TIMES_KEPT`. */
  runTimesMs: number[];
  /** The last run time a silence notice was sent after (so one silence is told once). */
  silenceToldAfterMs: number | undefined;
}

export interface ConnectionRecord {
  connection: Connection;
  cadence: ConnectionCadence;
}

/** How many run times a connection keeps: enough for a median interval, bounded. */
export const RUN_TIMES_KEPT = 8;

export interface ConnectionStore {
  get(id: string): Promise<ConnectionRecord | undefined>;
  /** Every connection (removed ones included), by id. */
  list(): Promise<ConnectionRecord[]>;
  /** Adds a connection; 'exists' when the id is taken (by a removed one too: ids are never reused while its tombstone lives). */
  add(connection: Connection): Promise<'added' | 'exists'>;
  /** Marks it removed (its webhook answers 410); false when there is no such active connection. */
  markRemoved(id: string, atMs: number): Promise<boolean>;
  /** Sets the Slack installations it is linked to (empty: none); false when there is no such active connection. */
  setSlackTeams(id: string, teamIds: readonly string[]): Promise<boolean>;
  /** Records a run's time (kept newest `RUN_TIMES_KEPT`, in order). */
  noteRun(id: string, atMs: number): Promise<void>;
  /** Records that the silence after `lastRunMs` was told; false when another sweep told it first. */
  markSilenceTold(id: string, lastRunMs: number): Promise<boolean>;
}
