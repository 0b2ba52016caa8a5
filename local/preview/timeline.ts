/**
 * The preview's workspace view as HTML: a channel sidebar and every top-level message, oldest first,
 * each with its channel, and its thread replies collapsed under it (a `<details>` the reader opens).
 */
import { messageBodyHtml } from './blocks';
import { escapeHtml } from './mrkdwn';
import { PREVIEW_PATHS } from './page';

/** What the preview needs of a posted message (the local Slack server's `PostedMessage` fits). */
export interface PreviewMessage {
  channel: string;
  ts: string;
  thread_ts?: string | undefined;
  text: string | undefined;
  blocks: unknown[] | undefined;
  edited?: boolean | undefined;
  /** Files shared with the message (files.completeUploadExternal): images are shown with their alt text. */
  files?: readonly PreviewFile[] | undefined;
}

export interface PreviewFile {
  id: string;
  name: string;
  title: string;
  mimetype: string;
  alt_txt?: string | undefined;
}

/** Shared files as Slack shows them: the title, then the image (alt text for screen readers and below it, as Slack's "alt text" shows it). */
function filesHtml(files: readonly PreviewFile[] | undefined): string {
  return (files ?? [])
    .map((file) => {
      const title = `<div class="file-title">${escapeHtml(file.title || file.name)}</div>`;
      if (file.mimetype !== 'image/png')
        return `<figure class="file">${title}<span class="unknown">file ${escapeHtml(file.name)} (${escapeHtml(file.mimetype)})</span></figure>`;
      const alt = escapeHtml(file.alt_txt ?? '');
      const src = `${PREVIEW_PATHS.files}${encodeURIComponent(file.id)}`;
      return `<figure class="file">${title}<img src="${src}" alt="${alt}" loading="lazy"><figcaption class="alt-text">Alt text: ${alt}</figcaption></figure>`;
    })
    .join('');
}

function isReply(message: PreviewMessage): boolean {
  return message.thread_ts !== undefined && message.thread_ts !== message.ts;
}

/** `HH:MM:SS` (UTC) of a Slack `ts`, and its ISO form for the `datetime` attribute. */
function timeOf(ts: string): { short: string; iso: string } {
  const date = new Date(Math.floor(Number(ts) * 1000));
  if (Number.isNaN(date.getTime())) return { short: ts, iso: '' };
  return { short: `${date.toISOString().slice(11, 19)} UTC`, iso: date.toISOString() };
}

function metaHtml(message: PreviewMessage, view: WorkspaceView, withChannel: boolean, ephemeral: boolean): string {
  const { botName } = view;
  const time = timeOf(message.ts);
  const channel = withChannel ? `<span class="channel">#${escapeHtml(nameOf(message.channel, view))}</span>` : '';
  const edited = message.edited === true ? '<span class="edited">(edited)</span>' : '';
  const onlyYou = ephemeral ? '<span class="only-you">Only visible to you</span>' : '';
  return `<div class="meta"><span class="author">${escapeHtml(botName)}</span><span class="app-badge">APP</span><time datetime="${time.iso}">${escapeHtml(time.short)}</time>${edited}${channel}${onlyYou}</div>`;
}

/** The channel as the workspace names it (its id when the source gives no name). */
function nameOf(channel: string, view: WorkspaceView): string {
  return view.channelNames?.[channel] ?? channel;
}

function messageHtml(message: PreviewMessage, view: WorkspaceView, replies: PreviewMessage[], ephemeral = false): string {
  const { botName } = view;
  const reply = isReply(message);
  const thread = replies.length === 0 ? '' : threadHtml(message, view, replies);
  const initial = escapeHtml(botName.slice(0, 1).toUpperCase() || 'B');
  const kind = `${reply ? ' reply' : ''}${ephemeral ? ' ephemeral' : ''}`;
  return (
    `<article class="message${kind}" data-ts="${escapeHtml(message.ts)}" data-channel="${escapeHtml(message.channel)}">` +
    `<div class="avatar" aria-hidden="true">${initial}</div>` +
    `<div class="content">${metaHtml(message, view, !reply, ephemeral)}<div class="body">${messageBodyHtml(message, view.channelNames)}${filesHtml(message.files)}</div>${thread}</div>` +
    `</article>`
  );
}

function threadHtml(parent: PreviewMessage, view: WorkspaceView, replies: PreviewMessage[]): string {
  const count = `${replies.length} ${replies.length === 1 ? 'reply' : 'replies'}`;
  const last = timeOf(replies[replies.length - 1]?.ts ?? parent.ts).short;
  return (
    `<details class="thread" data-ts="${escapeHtml(parent.ts)}"><summary><span class="reply-count">${count}</span>` +
    `<span class="last-reply">Last reply ${escapeHtml(last)}</span><span class="toggle-hint">View thread</span></summary>` +
    `<div class="replies">${replies.map((r) => messageHtml(r, view, [])).join('')}</div></details>`
  );
}

/** Every channel with a message, and every named one (empty ones too, so people can type there), sorted by name. */
function sidebarHtml(messages: PreviewMessage[], view: WorkspaceView): string {
  const counts = new Map<string, number>(Object.keys(view.channelNames ?? {}).map((id) => [id, 0]));
  for (const m of messages) if (!isReply(m)) counts.set(m.channel, (counts.get(m.channel) ?? 0) + 1);
  const items = [...counts.entries()]
    .map(([id, n]) => ({ id, name: nameOf(id, view), n }))
    .sort((a, b) => a.name.localeCompare(b.name))
    .map(
      ({ id, name, n }) =>
        `<li><button type="button" data-channel="${escapeHtml(id)}" data-name="${escapeHtml(name)}"># ${escapeHtml(name)}<span class="count">${n}</span></button></li>`,
    )
    .join('');
  return (
    `<nav class="sidebar"><div class="workspace">${escapeHtml(view.workspace)}</div><div class="section-title">Channels</div>` +
    `<ul class="channels"><li><button type="button" data-channel="">All messages<span class="count">${[...counts.values()].reduce((a, b) => a + b, 0)}</span></button></li>${items}</ul></nav>`
  );
}

export interface WorkspaceView {
  botName: string;
  workspace: string;
  /** Replies only the user sees, placed by time among the messages. */
  ephemerals?: PreviewMessage[] | undefined;
  /** Channel id → name: messages carry ids, people read names. */
  channelNames?: Readonly<Record<string, string>> | undefined;
}

/** The sidebar and the message list for `messages` (as the local Slack server keeps them, oldest first). */
export function workspaceHtml(messages: PreviewMessage[], view: WorkspaceView): string {
  const parents = messages.filter((m) => !isReply(m));
  const parentTs = new Set(parents.map((m) => m.ts));
  const repliesOf = (parent: PreviewMessage): PreviewMessage[] =>
    messages.filter((m) => isReply(m) && m.thread_ts === parent.ts && m.channel === parent.channel);
  // A reply whose parent is gone (deleted) still shows, as its own entry.
  const orphans = messages.filter((m) => isReply(m) && !parentTs.has(m.thread_ts ?? ''));
  const ephemeral = new Set(view.ephemerals ?? []);
  const entries = [...parents, ...orphans, ...ephemeral].sort((a, b) => Number(a.ts) - Number(b.ts));
  const list = entries.map((m) => messageHtml(m, view, parentTs.has(m.ts) ? repliesOf(m) : [], ephemeral.has(m)));
  const empty = '<p class="empty">No messages yet: whatever the bridge posts appears here as it arrives.</p>';
  return `${sidebarHtml(messages, view)}<section class="messages" aria-live="polite">${list.length === 0 ? empty : list.join('')}</section>`;
}
