/**
 * Files into Slack threads (the trend chart's PNG), the way Slack wants them since files.upload was
 * retired: files.getUploadURLExternal (name, size, alt text) → POST the bytes to the URL it returns →
 * files.completeUploadExternal (channel, thread, optional comment). Needs the `files:write` scope.
 *
 * Not `WebClient.filesUploadV2`: it sends the alt text as `alt_text` (Slack's argument is `alt_txt`),
 * sends the bot token to the upload URL as well, and leaves no room to check that URL. The first two
 * steps are tried a second time after a connection failure (e.g. a kept-alive socket the server had
 * just closed): nothing is in the thread before step 3. Step 3 is never repeated: it could post the
 * file twice. A chart is an extra, so there is no waiting on rate limits either.
 * Failures leave as the domain's vocabulary (./slack-errors); the token never appears in them.
 */
import type { FilesGetUploadURLExternalResponse, WebClient } from '@slack/web-api';
import type { SlackFileUpload, SlackFileUploader } from '../charts/types';
import { UnexpectedResponse } from '../errors';
import { classifySlackError, fixForSlackError, SlackPermanentError, SlackUnavailableError } from './slack-errors';
import { slackConnection } from './slack-poster';

export interface SlackFileUploaderOptions {
  token: string;
  /** The secret the token came from, named when the token can't go in a header (default "Slack bot token"). */
  tokenSecretName?: string;
  /** Base URL of the Web API (the local Slack server's `apiUrl` locally). Default Slack's. */
  slackApiUrl?: string | undefined;
  /** Epoch ms by which the upload must end (each request is cut off there). No deadline when omitted. */
  deadline?: (() => number) | undefined;
  now?: () => number;
  /** Upper bound of one request. Default 10 000. */
  requestTimeoutMs?: number;
}

/** Slack's `alt_txt` limit (longer answers `alt_txt_too_large`). */
export const SLACK_ALT_TEXT_LIMIT = 1000;

/** What to do about file-specific Slack errors; anything else goes to `fixForSlackError`. */
const FILE_FIXES: Readonly<Record<string, string>> = {
  missing_scope: 'add the files:write scope to the Slack app and reinstall it, or set chartsEnabled to false',
  file_uploads_disabled: 'the workspace has disabled file uploads: ask a Slack admin to allow them, or turn charts off',
  file_uploads_except_images_disabled: 'the workspace allows only images: this is a bridge bug if a PNG was refused — report it',
  file_upload_size_restricted: 'the workspace restricts the size of uploads below the chart size: ask a Slack admin, or turn charts off',
  file_type_not_allowed: 'the workspace does not allow PNG uploads: ask a Slack admin, or turn charts off',
  alt_txt_too_large: 'the alt text was over 1,000 characters: this is a bridge bug — report it',
};

export function createSlackFileUploader(options: SlackFileUploaderOptions): SlackFileUploader {
  const { client, redact, remainingMs, requestTimeoutMs } = slackConnection(options);
  const steps: UploadSteps = {
    client,
    redact,
    allowedOrigins: uploadOrigins(options.slackApiUrl),
    requestBudgetMs: () => Math.max(1, Math.floor(Math.min(requestTimeoutMs, remainingMs()))),
  };
  return {
    async upload(file) {
      const target = await againAfterConnectionFailure(() => uploadUrl(steps, file));
      await againAfterConnectionFailure(() => sendBytes(steps, target.url, file));
      await complete(steps, target.fileId, file);
      return { fileId: target.fileId };
    },
  };
}

interface UploadSteps {
  client: WebClient;
  redact: (text: string) => string;
  allowedOrigins: readonly string[];
  requestBudgetMs: () => number;
}

/** Runs `step`, and once more when it failed to connect or lost its connection (nothing visible happened yet). */
async function againAfterConnectionFailure<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof SlackUnavailableError && error.reason === 'network') return step();
    throw error;
  }
}

/** Step 1: where to send the bytes, and the file's id. */
async function uploadUrl(steps: UploadSteps, file: SlackFileUpload): Promise<{ url: string; fileId: string }> {
  const method = 'files.getUploadURLExternal';
  let result: FilesGetUploadURLExternalResponse;
  try {
    // apiCall, not files.getUploadURLExternal: its typed arguments name the alt text `alt_text`.
    result = await steps.client.apiCall(method, {
      filename: file.filename,
      length: file.bytes.byteLength,
      ...(file.altText !== undefined && file.altText !== '' ? { alt_txt: file.altText.slice(0, SLACK_ALT_TEXT_LIMIT) } : {}),
    });
  } catch (error) {
    throw slackFailure(error, method, file.channel, steps.redact);
  }
  const { upload_url: url, file_id: fileId } = result;
  if (typeof url !== 'string' || typeof fileId !== 'string' || fileId === '') {
    throw new UnexpectedResponse(
      `Slack ${method} answered without upload_url/file_id`,
      'no upload_url or file_id',
      'Slack changed its answer?',
    );
  }
  if (!isAllowedUploadUrl(url, steps.allowedOrigins)) {
    throw new UnexpectedResponse(
      `Slack ${method} answered an upload URL outside Slack (${originOf(url) ?? 'not a URL'})`,
      'upload_url is not a Slack URL',
      'the bytes were not sent',
    );
  }
  return { url, fileId };
}

/** Step 2: the bytes, to the URL Slack gave (it carries its own authorisation: no token is sent). */
async function sendBytes(steps: UploadSteps, url: string, file: SlackFileUpload): Promise<void> {
  let response: Response;
  try {
    response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/octet-stream' },
      body: file.bytes,
      redirect: 'error',
      signal: AbortSignal.timeout(steps.requestBudgetMs()),
    });
    await response.arrayBuffer();
  } catch (error) {
    // Nothing is in the thread before step 3: the whole upload can be tried again.
    throw new SlackUnavailableError(`Slack file upload for ${file.channel} failed: ${errorName(error)}`, {
      reason: error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError') ? 'timeout' : 'network',
      attempts: 1,
      code: 'upload_failed',
    });
  }
  if (response.status === 200) return;
  const code = `http_${response.status}`;
  if (response.status >= 500 || response.status === 408 || response.status === 429) {
    throw new SlackUnavailableError(`Slack file upload for ${file.channel} answered HTTP ${response.status}`, {
      reason: response.status === 429 ? 'ratelimited' : 'server_error',
      attempts: 1,
      code,
    });
  }
  const fix = 'Slack refused the file bytes: this is a bridge bug if it repeats — report it with the status';
  throw new SlackPermanentError(`Slack file upload for ${file.channel} answered HTTP ${response.status}. Fix: ${fix}`, {
    code,
    fix,
    method: 'files.upload (bytes)',
    channel: file.channel,
  });
}

/** Step 3: the file shared into the channel or thread. */
async function complete(steps: UploadSteps, fileId: string, file: SlackFileUpload): Promise<void> {
  try {
    await steps.client.files.completeUploadExternal({
      files: [{ id: fileId, title: file.title ?? file.filename }],
      channel_id: file.channel,
      ...(file.threadTs !== undefined ? { thread_ts: file.threadTs } : {}),
      ...(file.initialComment !== undefined && file.initialComment !== '' ? { initial_comment: file.initialComment } : {}),
    });
  } catch (error) {
    throw slackFailure(error, 'files.completeUploadExternal', file.channel, steps.redact);
  }
}

/** A WebClient failure of one step, in the domain's vocabulary. */
function slackFailure(error: unknown, method: string, channel: string, redact: (text: string) => string): Error {
  const verdict = classifySlackError(error);
  if (verdict.kind === 'permanent') {
    const fix = FILE_FIXES[verdict.code] ?? fixForSlackError(verdict.code, { channel, method });
    const detail = verdict.details.length > 0 ? ` (${verdict.details.join('; ')})` : '';
    return new SlackPermanentError(redact(`Slack ${method} for ${channel} failed: ${verdict.code}${detail}. Fix: ${fix}`), {
      code: verdict.code,
      fix,
      method,
      channel,
      details: verdict.details.map(redact),
    });
  }
  return new SlackUnavailableError(redact(`Slack unavailable for ${method} in ${channel} (${verdict.reason}: ${verdict.code})`), {
    reason: verdict.reason,
    retryAfterSeconds: verdict.retryAfterSeconds,
    attempts: 1,
    code: verdict.code,
    outcomeUnknown: verdict.outcome === 'unknown' && method === 'files.completeUploadExternal',
  });
}

/** Slack's file hosts, plus the local Slack server's origin when SLACK_API_URL points at one. */
export function uploadOrigins(slackApiUrl: string | undefined): string[] {
  const local = slackApiUrl !== undefined && URL.canParse(slackApiUrl) ? new URL(slackApiUrl).origin : undefined;
  return local === undefined || local === 'https://slack.com' ? [] : [local];
}

/** An https URL on slack.com (files.slack.com today), or one of `extraOrigins`. */
export function isAllowedUploadUrl(url: string, extraOrigins: readonly string[]): boolean {
  if (!URL.canParse(url)) return false;
  const parsed = new URL(url);
  if (extraOrigins.includes(parsed.origin)) return true;
  return parsed.protocol === 'https:' && (parsed.hostname === 'slack.com' || parsed.hostname.endsWith('.slack.com')) && parsed.port === '';
}

function originOf(url: string): string | undefined {
  return URL.canParse(url) ? new URL(url).origin : undefined;
}

function errorName(error: unknown): string {
  if (!(error instanceof Error)) return 'unknown error';
  const cause = error.cause as { code?: unknown } | undefined;
  return typeof cause?.code === 'string' ? cause.code : error.name;
}
