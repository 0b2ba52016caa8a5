/**
 * Slack request verification (https://api.slack.com/authentication/verifying-requests-from-slack):
 *   X-Slack-Signature: v0=<hex HMAC-SHA256(signing secret, "v0:" + X-Slack-Request-Timestamp + ":" + raw body)>
 * with the timestamp within a tolerance of now (replay protection) and not ahead of now by more than
 * a clock's skew. Pure and total: never throws, compares in constant time, and the secret never
 * appears in a result. A verified request's MAC is returned in one spelling (lower-case hex), so the
 * replay guard keys a re-spelled signature (`V0=`… upper-case hex) as the request it is.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from './contracts';

export const SLACK_SIGNATURE_HEADER = 'x-slack-signature';
export const SLACK_TIMESTAMP_HEADER = 'x-slack-request-timestamp';

/** missing: a header is absent or blank; malformed: not `v0=<64 hex>` or a timestamp that isn't digits;
 * stale: timestamp older than the tolerance; future: timestamp ahead of now by more than
 * `MAX_FUTURE_SKEW_SECONDS`; mismatch: no signing secret produces the signature. */
export type SlackSignatureFailure = 'missing' | 'malformed' | 'stale' | 'future' | 'mismatch';

/** A verified request: its timestamp (seconds) and its MAC as lower-case hex (the replay guard's key). */
export type SlackSignatureCheck = { ok: true; timestamp: number; mac: string } | { ok: false; reason: SlackSignatureFailure };

/**
 * How far ahead of our clock a timestamp may be. Slack stamps a request when it sends it, so a genuine
 * one is never from our future beyond the two clocks' skew (both NTP-synced: milliseconds); 5 s covers
 * that with room, while a request dated further ahead, which would outlive its replay record's
 * tolerance, is refused.
 */
export const MAX_FUTURE_SKEW_SECONDS = 5;

export interface SlackRequestToVerify {
  signature: string | undefined;
  timestamp: string | undefined;
  rawBody: Buffer | string;
  nowSeconds: number;
}

export interface SlackVerifierOptions {
  /** Usually one; two while the app's signing secret is being regenerated. */
  signingSecrets: readonly string[];
  toleranceSeconds?: number;
}

export type SlackRequestVerifier = (request: SlackRequestToVerify) => SlackSignatureCheck;

const SIGNATURE = /^v0=([0-9a-fA-F]{64})$/;
const TIMESTAMP = /^\d{1,15}$/;

/** Keys are prepared once; each request then costs one HMAC per live secret. */
export function createSlackRequestVerifier(options: SlackVerifierOptions): SlackRequestVerifier {
  const tolerance = options.toleranceSeconds ?? DEFAULT_SIGNATURE_TOLERANCE_SECONDS;
  const keys: KeyObject[] = options.signingSecrets.filter((s) => s !== '').map((s) => createSecretKey(Buffer.from(s, 'utf8')));
  return (request) => {
    try {
      return check(request, keys, tolerance);
    } catch {
      // Defensive: a verifier that throws would turn a bad request into a 500 and a retry storm.
      return { ok: false, reason: 'malformed' };
    }
  };
}

function check(request: SlackRequestToVerify, keys: readonly KeyObject[], tolerance: number): SlackSignatureCheck {
  const signature = request.signature?.trim();
  const timestamp = request.timestamp?.trim();
  if (!signature || !timestamp) return { ok: false, reason: 'missing' };
  const hex = SIGNATURE.exec(signature)?.[1];
  if (hex === undefined || !TIMESTAMP.test(timestamp)) return { ok: false, reason: 'malformed' };
  const seconds = Number(timestamp);
  if (!Number.isFinite(request.nowSeconds) || request.nowSeconds - seconds > tolerance) return { ok: false, reason: 'stale' };
  if (seconds - request.nowSeconds > Math.min(tolerance, MAX_FUTURE_SKEW_SECONDS)) return { ok: false, reason: 'future' };
  const given = Buffer.from(hex, 'hex');
  for (const key of keys) {
    if (timingSafeEqual(given, hmac(key, timestamp, request.rawBody))) return { ok: true, timestamp: seconds, mac: given.toString('hex') };
  }
  return { ok: false, reason: 'mismatch' };
}

function hmac(key: KeyObject | string, timestamp: string, rawBody: Buffer | string): Buffer {
  return createHmac('sha256', key).update(`v0:${timestamp}:`).update(rawBody).digest();
}

/** One-shot form, for callers that don't keep a verifier. */
export function verifySlackRequest(request: SlackRequestToVerify & SlackVerifierOptions): SlackSignatureCheck {
  const { signingSecrets, toleranceSeconds, ...rest } = request;
  return createSlackRequestVerifier({ signingSecrets, ...(toleranceSeconds === undefined ? {} : { toleranceSeconds }) })(rest);
}

/** The two headers Slack would send for this body (the local Slack server, the CLI and tests sign with it). */
export function signSlackRequest(signingSecret: string, timestampSeconds: number, rawBody: Buffer | string): Record<string, string> {
  const timestamp = String(Math.floor(timestampSeconds));
  return {
    [SLACK_SIGNATURE_HEADER]: `v0=${hmac(signingSecret, timestamp, rawBody).toString('hex')}`,
    [SLACK_TIMESTAMP_HEADER]: timestamp,
  };
}
