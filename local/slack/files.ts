/**
 * File uploads as Slack takes them (the trend charts' PNGs): `files.getUploadURLExternal` hands out an
 * upload URL (`POST /_upload/<file id>`, the announced length checked), `files.completeUploadExternal`
 * shares the files into a channel or thread as one message carrying a `files` list, and each file is
 * served at its `url_private` (`GET /_files/<file id>/<name>`).
 */
import { randomUUID } from 'node:crypto';
import type http from 'node:http';
import { SLACK_ALT_TEXT_LIMIT } from '../../shared/adapters/slack-files';
import { asArray, isRecord, parseJsonOrUndefined } from '../../shared/util';
import { readBody, send } from '../http';
import { fail, MAX_BODY_BYTES, ok, optString, type SlackAnswer } from './protocol';
import type { LocalSlackFile, SlackStore } from './store';

const FILE_UPLOAD_PATH = '/_upload/';
const FILE_DOWNLOAD_PATH = '/_files/';

interface Upload {
  name: string;
  length: number;
  altText: string | undefined;
  bytes?: Buffer;
  /** The bytes came with an Authorization header (an upload needs none). */
  withToken?: boolean;
}

export class SlackFiles {
  private readonly uploads = new Map<string, Upload>();

  /** `origin`: this server's; `uploadOrigin`: of the upload URLs handed out (the rehearsal's `https://files.slack.com`, routed here). */
  constructor(
    private readonly store: SlackStore,
    private readonly origin: string,
    private readonly uploadOrigin: string,
  ) {}

  /** An upload's bytes (undefined until sent), and whether they came with an Authorization header. */
  upload(fileId: string): { bytes: Buffer | undefined; withToken: boolean } | undefined {
    const upload = this.uploads.get(fileId);
    return upload && { bytes: upload.bytes, withToken: upload.withToken === true };
  }

  /** Takes the bytes of an upload and serves uploaded files; false for any other path. */
  async serve(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<boolean> {
    if (url.pathname.startsWith(FILE_UPLOAD_PATH) && req.method === 'POST') {
      const upload = this.uploads.get(url.pathname.slice(FILE_UPLOAD_PATH.length));
      const bytes = await readBody(req, MAX_BODY_BYTES);
      // Slack checks the size announced in files.getUploadURLExternal; a mismatch is a client bug.
      if (upload === undefined) send(res, 404, 'no such upload');
      else if (bytes.length !== upload.length) send(res, 400, `length ${bytes.length} is not the ${upload.length} announced`);
      else {
        Object.assign(upload, { bytes, withToken: req.headers.authorization !== undefined });
        send(res, 200, `OK - ${bytes.length}`);
      }
      return true;
    }
    if (url.pathname.startsWith(FILE_DOWNLOAD_PATH) && req.method === 'GET') {
      const stored = this.uploads.get(url.pathname.slice(FILE_DOWNLOAD_PATH.length).split('/')[0] ?? '');
      if (stored?.bytes === undefined) send(res, 404, 'no such file');
      else send(res, 200, stored.bytes, { 'content-type': mimetypeOf(stored.name), 'cache-control': 'no-store' });
      return true;
    }
    return false;
  }

  /** `files.getUploadURLExternal`. */
  uploadUrl(args: Record<string, unknown>): SlackAnswer {
    const name = optString(args.filename);
    const length = Number(optString(args.length));
    if (name === undefined || name.trim() === '' || !Number.isInteger(length) || length <= 0) return fail('invalid_arguments');
    const altText = optString(args.alt_txt);
    if (altText !== undefined && altText.length > SLACK_ALT_TEXT_LIMIT) return fail('alt_txt_too_large');
    const id = `F${randomUUID().replace(/-/g, '').slice(0, 10).toUpperCase()}`;
    this.uploads.set(id, { name, length, altText });
    return ok({ upload_url: `${this.uploadOrigin}${FILE_UPLOAD_PATH}${id}`, file_id: id });
  }

  /** `files.completeUploadExternal`: one message carrying the files, in the channel or the thread; its `ts` noted on `call`. */
  complete(args: Record<string, unknown>, call: { ts: string | undefined }): SlackAnswer {
    const entries = asArray(typeof args.files === 'string' ? parseJsonOrUndefined(args.files) : args.files).filter(isRecord);
    if (entries.length === 0) return fail('invalid_arguments');
    const channel = this.store.channelId(optString(args.channel_id) ?? '');
    const refused = channel === '' ? 'channel_not_found' : this.store.accessError(channel);
    if (refused) return fail(refused);
    const threadTs = optString(args.thread_ts);
    if (threadTs !== undefined && !this.store.posted.some((m) => m.channel === channel && m.ts === threadTs))
      return fail('thread_not_found');
    const files: LocalSlackFile[] = [];
    for (const entry of entries) {
      const id = optString(entry.id) ?? '';
      const stored = this.uploads.get(id);
      if (stored?.bytes === undefined) return fail('file_not_found');
      const { name, altText: alt_txt } = stored;
      const url_private = `${this.origin}${FILE_DOWNLOAD_PATH}${id}/${encodeURIComponent(name)}`;
      files.push({
        id,
        name,
        title: optString(entry.title) ?? name,
        mimetype: mimetypeOf(name),
        size: stored.bytes.length,
        alt_txt,
        url_private,
      });
    }
    call.ts = this.store.nextTs();
    const text = optString(args.initial_comment) ?? '';
    this.store.posted.push({
      channel,
      ts: call.ts,
      thread_ts: threadTs,
      text,
      blocks: undefined,
      metadata: undefined,
      edited: false,
      files,
    });
    this.store.notify();
    return ok({ files: files.map((f) => ({ id: f.id, title: f.title })) });
  }
}

function mimetypeOf(name: string): string {
  return /\.png$/i.test(name) ? 'image/png' : 'application/octet-stream';
}
