/**
 * Webhook signature scheme (spec §5 "Webhook signature"):
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>
 * Pure functions, no AWS. Secrets never appear in results or errors.
 */
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from './contracts';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_TOLERANCE_SECONDS = DEFAULT_SIGNATURE_TOLERANCE_SECONDS;

export type SignatureFailure =
  | 'missing_header'
  | 'malformed_header'
  | 'no_matching_signature'
  | 'too_old'
  | 'too_new';

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: SignatureFailure };

/** One `t=` with the `v1=` entries that follow it. A repeated header arrives comma-joined: several groups. */
interface SignatureGroup {
  timestamp: number;
  signatures: Buffer[];
}

const DIGITS = /^\d{1,15}$/;
/** The exact form the service sends; matched first so the usual delivery skips the general parser. */
const CANONICAL_HEADER = /^t=(\d{1,15}),v1=([0-9a-fA-F]{64})$/;
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const DIGEST_BYTES = 32;

/** Parses the header into groups, or null when it is malformed (no usable `t`, or a `t` that isn't all digits). */
export function parseSignatureHeader(header: string): SignatureGroup[] | null {
  const groups: { t: string | undefined; v1: string[] }[] = [];
  let current: { t: string | undefined; v1: string[] } | undefined;
  for (const part of header.split(',')) {
    const item = part.trim();
    if (item === '') continue;
    const eq = item.indexOf('=');
    if (eq <= 0) continue;
    const key = item.slice(0, eq).trim();
    const value = item.slice(eq + 1).trim();
    if (key === 't') {
      if (current === undefined || current.t !== undefined) {
        current = { t: value, v1: [] };
        groups.push(current);
      } else {
        current.t = value;
      }
    } else if (key === 'v1') {
      if (current === undefined) {
        current = { t: undefined, v1: [] };
        groups.push(current);
      }
      current.v1.push(value);
    }
    // Other schemes (v0, v2, ...) are ignored, as the scheme allows.
  }
  if (groups.length === 0) return null;
  const parsed: SignatureGroup[] = [];
  for (const group of groups) {
    if (group.t === undefined || !DIGITS.test(group.t)) return null;
    parsed.push({
      timestamp: Number(group.t),
      // A v1 that isn't 64 hex digits can never match; keeping it out means the compare never sees a length mismatch.
      signatures: group.v1.filter((hex) => SHA256_HEX.test(hex)).map((hex) => Buffer.from(hex, 'hex')),
    });
  }
  return parsed;
}

export interface SignatureVerifierOptions {
  secrets: readonly string[];
  toleranceSeconds?: number;
}

export type SignatureVerifier = (header: string | undefined, rawBody: Buffer, nowSeconds: number) => SignatureCheck;

/**
 * Builds a verifier for a fixed set of secrets (several are live while a webhook is being rotated).
 * Keys are prepared once so each delivery costs one HMAC per secret.
 */
export function createSignatureVerifier(options: SignatureVerifierOptions): SignatureVerifier {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const keys: KeyObject[] = options.secrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
  return (header, rawBody, nowSeconds) => {
    if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_header' };
    const canonical = CANONICAL_HEADER.exec(header);
    const groups =
      canonical !== null
        ? [{ timestamp: Number(canonical[1]), signatures: [Buffer.from(canonical[2] ?? '', 'hex')] }]
        : parseSignatureHeader(header);
    if (groups === null) return { ok: false, reason: 'malformed_header' };
    let staleness: 'too_old' | 'too_new' | undefined;
    for (const group of groups) {
      if (group.signatures.length === 0) continue;
      if (!groupMatches(group, keys, rawBody)) continue;
      const skew = nowSeconds - group.timestamp;
      if (skew > tolerance) staleness = 'too_old';
      else if (skew < -tolerance) staleness = 'too_new';
      else return { ok: true, timestamp: group.timestamp };
    }
    return { ok: false, reason: staleness ?? 'no_matching_signature' };
  };
}

function groupMatches(group: SignatureGroup, keys: readonly KeyObject[], rawBody: Buffer): boolean {
  const prefix = `${group.timestamp}.`;
  for (const key of keys) {
    const expected = createHmac('sha256', key).update(prefix).update(rawBody).digest();
    for (const candidate of group.signatures) {
      if (candidate.length === DIGEST_BYTES && timingSafeEqual(candidate, expected)) return true;
    }
  }
  return false;
}

/** One-shot form of the verifier, for callers that don't keep one. */
export function verifySignature(input: {
  header: string | undefined;
  rawBody: Buffer;
  secrets: readonly string[];
  nowSeconds: number;
  toleranceSeconds?: number;
}): SignatureCheck {
  const verifier = createSignatureVerifier({
    secrets: input.secrets,
    ...(input.toleranceSeconds === undefined ? {} : { toleranceSeconds: input.toleranceSeconds }),
  });
  return verifier(input.header, input.rawBody, input.nowSeconds);
}

/** The signature header the service would send for this body (used by the simulator, the CLI and tests). */
export function signPayload(secret: string, timestampSeconds: number, rawBody: string | Buffer): string {
  const hex = createHmac('sha256', secret).update(`${timestampSeconds}.`).update(rawBody).digest('hex');
  return `t=${timestampSeconds},v1=${hex}`;
}
