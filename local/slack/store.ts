/**
 * What the local Slack workspace holds: its channels (ids, names, memberships, archived ones) and the
 * messages posted in them, with the ephemeral replies only their user sees. The Web API and the app
 * deliveries both read and change it; watchers (the browser preview) hear of every change.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

export interface PostedMessage {
  channel: string;
  ts: string;
  thread_ts: string | undefined;
  text: string | undefined;
  blocks: unknown[] | undefined;
  metadata: unknown;
  /** Set when `chat.update` changed the message. */
  edited: boolean;
  /** Files shared with the message (files.completeUploadExternal). */
  files?: LocalSlackFile[] | undefined;
  /** The workspace of the installation whose token posted it; absent: the server's own. */
  team?: string | undefined;
}

/** A file as Slack lists it on its message; `url_private` serves the bytes from this server. */
export interface LocalSlackFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  size: number;
  alt_txt: string | undefined;
  url_private: string;
}

/** A reply only its user sees (Slack's ephemeral message): command answers and ephemeral response_url answers. */
export interface EphemeralMessage {
  channel: string;
  ts: string;
  userId: string;
  text: string | undefined;
  blocks: unknown[] | undefined;
}

export interface WorkspaceChannels {
  /** Channels the bot is a member of; `'all'` (default) means every channel. A leading `#` is ignored. */
  memberChannels?: string[] | 'all';
  /**
   * Channels that exist. When given, any other channel (not also in `memberChannels`) answers
   * `channel_not_found`. When omitted every channel exists.
   */
  knownChannels?: string[];
  /** Channels that are archived: `conversations.info` says `is_archived`, posts answer `is_archived`. */
  archivedChannels?: string[];
  /**
   * Channel id → name, as a workspace has them: a post to `#name` (or `name`) lands in the channel's id,
   * commands and clicks report the id, `conversations.info` and the preview show the name. Any other
   * channel is its own id.
   */
  channelNames?: Record<string, string>;
  /** Keep the messages in this JSON file: read at start, written on every change (the local stack's data directory). */
  stateFile?: string;
}

export function normalizeChannel(channel: string): string {
  return channel.trim().replace(/^#/, '');
}

export class SlackStore {
  readonly posted: PostedMessage[] = [];
  readonly ephemeral: EphemeralMessage[] = [];
  readonly archived: Set<string>;
  private readonly members: Set<string> | 'all';
  private readonly known: Set<string> | undefined;
  /** Channel id → name (`channelNames`), and back. */
  private readonly channelNames: Map<string, string>;
  private readonly idsByName: Map<string, string>;
  private lastTsMicros = 0;
  private readonly stateFile: string | undefined;
  private readonly listeners = new Set<() => void>();

  constructor(channels: WorkspaceChannels) {
    this.channelNames = new Map(Object.entries(channels.channelNames ?? {}));
    this.idsByName = new Map([...this.channelNames].map(([id, name]) => [name, id]));
    const members = channels.memberChannels ?? 'all';
    this.members = members === 'all' ? 'all' : new Set(members.map((c) => this.channelId(c)));
    this.known = channels.knownChannels ? new Set(channels.knownChannels.map((c) => this.channelId(c))) : undefined;
    this.archived = new Set((channels.archivedChannels ?? []).map((c) => this.channelId(c)));
    this.stateFile = channels.stateFile;
    if (this.stateFile !== undefined && existsSync(this.stateFile)) {
      const kept = JSON.parse(readFileSync(this.stateFile, 'utf8')) as Pick<SlackStore, 'posted' | 'ephemeral'>;
      this.posted.push(...kept.posted);
      this.ephemeral.push(...kept.ephemeral);
    }
  }

  /** The channel's id: `#name` or `name` of a channel in `channelNames` is its id, as Slack resolves it; else the bare value. */
  channelId(channel: string): string {
    const bare = normalizeChannel(channel);
    return this.idsByName.get(bare) ?? bare;
  }

  /** The channel's name as the workspace shows it (its id when it has none). */
  channelName(channel: string): string {
    const id = this.channelId(channel);
    return this.channelNames.get(id) ?? id;
  }

  /** Every channel with a name (`channelNames`), as id → name. */
  namedChannels(): Record<string, string> {
    return Object.fromEntries(this.channelNames);
  }

  channelExists(channel: string): boolean {
    if (!this.known) return true;
    return this.known.has(channel) || (this.members !== 'all' && this.members.has(channel));
  }

  isMember(channel: string): boolean {
    return this.members === 'all' || this.members.has(channel);
  }

  /** Why the bot can't read or write `channel`: it doesn't exist, or the bot isn't in it; undefined when it can. */
  accessError(channel: string): 'channel_not_found' | 'not_in_channel' | undefined {
    if (!this.channelExists(channel)) return 'channel_not_found';
    return this.isMember(channel) ? undefined : 'not_in_channel';
  }

  /** `/invite @bot` in `channel`: the bot becomes a member (it already is of every channel when `memberChannels` is `'all'`). */
  inviteBot(channel: string): void {
    if (this.members !== 'all') this.members.add(this.channelId(channel));
  }

  /** Unique, strictly increasing Slack-style timestamps (`seconds.micros`). */
  nextTs(): string {
    const micros = Math.max(Date.now() * 1000, this.lastTsMicros + 100);
    this.lastTsMicros = micros;
    const seconds = Math.floor(micros / 1_000_000);
    return `${seconds}.${String(micros % 1_000_000).padStart(6, '0')}`;
  }

  /** Forgets every message; channels and memberships stay. */
  clear(): void {
    this.posted.length = 0;
    this.ephemeral.length = 0;
  }

  subscribe(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(): void {
    if (this.stateFile !== undefined)
      writeFileSync(this.stateFile, JSON.stringify({ posted: this.posted, ephemeral: this.ephemeral }), { mode: 0o600 });
    for (const listener of [...this.listeners]) {
      try {
        listener();
      } catch {
        // A watcher (the browser preview) must not break the API.
      }
    }
  }
}
