/**
 * Webhook signature scheme (spec §5 "Webhook signature"):
 *   X-Service-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>." + raw body)>
 * Pure functions, no AWS. Secrets never appear in results or errors.
 */
import { DEFAULT_SIGNATURE_TOLERANCE_SECONDS } from './contracts';
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-service-signature';
export const DEFAULT_TOLERANCE_SECONDS = DEFAULT_SIGNATURE_TOLERANCE_SECONDS;

export type SignatureFailure = 'missing_header' | 'malformed_header' | 'no_matching_signature' | 'too_old' | 'too_new';

export type SignatureCheck = { ok: true; timestamp: number } | { ok: false; reason: SignatureFailure };

/** One `t=` with the `v1=` entries that follow it. A repeated header arrives comma-joined: several groups. */
interface SignatureGroup {
  timestamp: number;
  signatures: Buffer[];
}

const DIGITS = /^\d{1,15}$/;
/** The exact form the service sends; matched first so the usual delivery skips the general parser. */
const SHA256_HEX = /^[0-9a-fA-F]{64}$/;
const DIGEST_BYTES = 32;

/** More groups or `v1` entries than this make the header malformed: each costs hashing, and the service sends one of each. */
export const MAX_SIGNATURE_GROUPS = 8;
export const MAX_SIGNATURE_ENTRIES = 16;

/**
 * Parses the header into groups, or null when it is malformed: no usable `t`, a `t` that isn't all
 * digits, or more than MAX_SIGNATURE_GROUPS groups / MAX_SIGNATURE_ENTRIES `v1` entries.
 */
export function parseSignatureHeader(header: string): SignatureGroup[] | null {
  const groups: { t: string | undefined; v1: string[] }[] = [];
  let current: { t: string | undefined; v1: string[] } | undefined;
  let entries = 0;
  for (const part of header.split(',')) {
    const item = part.trim();
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
      entries += 1;
    }
    // Other schemes (v0, v2, ...) are ignored, as the scheme allows.
    if (groups.length > MAX_SIGNATURE_GROUPS || entries > MAX_SIGNATURE_ENTRIES) return null;
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
  /** Called once per HMAC computed (tests count the work a header costs). */
  onHmac?: (() => void) | undefined;
}

export type SignatureVerifier = (header: string | undefined, rawBody: Buffer, nowSeconds: number) => SignatureCheck;

/**
 * Builds a verifier for a fixed set of secrets (several are live while a webhook is being rotated).
 * Keys are prepared once. Groups outside the tolerance are never hashed, and each distinct `t` is
 * hashed once per secret, so a delivery costs at most MAX_SIGNATURE_GROUPS HMACs per secret (one
 * for the service's own header form).
 */
export function createSignatureVerifier(options: SignatureVerifierOptions): SignatureVerifier {
  const tolerance = options.toleranceSeconds ?? DEFAULT_TOLERANCE_SECONDS;
  const keys: KeyObject[] = options.secrets.map((secret) => createSecretKey(Buffer.from(secret, 'utf8')));
  const hmac = (key: KeyObject, timestamp: number, rawBody: Buffer): Buffer => {
    options.onHmac?.();
    return createHmac('sha256', key).update(`${timestamp}.`).update(rawBody).digest();
  };
  // The service's own header form is checked without a regex, slices or per-call buffers (the hot path).
  const candidate = Buffer.alloc(DIGEST_BYTES);
  const verifyCanonical = (timestamp: number, rawBody: Buffer, nowSeconds: number): SignatureCheck => {
    const skew = nowSeconds - timestamp;
    if (skew > tolerance) return { ok: false, reason: 'too_old' };
    if (skew < -tolerance) return { ok: false, reason: 'too_new' };
    for (const key of keys) if (timingSafeEqual(hmac(key, timestamp, rawBody), candidate)) return { ok: true, timestamp };
    return { ok: false, reason: 'no_matching_signature' };
  };
  return (header, rawBody, nowSeconds) => {
    if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_header' };
    const timestamp = readCanonicalHeader(header, candidate);
    if (timestamp !== undefined) return verifyCanonical(timestamp, rawBody, nowSeconds);
    const groups = parseSignatureHeader(header);
    if (groups === null) return { ok: false, reason: 'malformed_header' };
    const { fresh, staleness } = signaturesByFreshTimestamp(groups, nowSeconds, tolerance);
    for (const [timestamp, signatures] of fresh) {
      for (const key of keys) {
        const expected = hmac(key, timestamp, rawBody);
        if (signatures.some((candidate) => candidate.length === DIGEST_BYTES && timingSafeEqual(candidate, expected))) {
          return { ok: true, timestamp };
        }
      }
    }
    return { ok: false, reason: fresh.size > 0 ? 'no_matching_signature' : (staleness ?? 'no_matching_signature') };
  };
}

/**
 * `t=<1–15 digits>,v1=<64 hex digits>`: its timestamp, with the signature decoded into `signature`
 * (DIGEST_BYTES long), or undefined for any other form (the general parser's; `signature` is then
 * scratch). The hex is checked and decoded in one pass by char code, with no slice or Buffer decoder
 * call: this runs for every delivery, and Buffer's decoder would read only the low byte of a
 * non-ASCII character.
 */
function readCanonicalHeader(header: string, signature: Buffer): number | undefined {
  const comma = header.indexOf(',v1=');
  if (comma < 3 || comma > 17 || header.length !== comma + 4 + 2 * DIGEST_BYTES || !header.startsWith('t=')) return undefined;
  let timestamp = 0;
  for (let i = 2; i < comma; i++) {
    const digit = header.charCodeAt(i) - 48;
    if (digit < 0 || digit > 9) return undefined;
    timestamp = timestamp * 10 + digit;
  }
  for (let byte = 0, i = comma + 4; byte < DIGEST_BYTES; byte++, i += 2) {
    const high = hexValue(header.charCodeAt(i));
    const low = hexValue(header.charCodeAt(i + 1));
    if (high < 0 || low < 0) return undefined;
    signature[byte] = (high << 4) | low;
  }
  return timestamp;
}

/** The value of one hex digit's char code, -1 for anything else. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  if (code >= 97 && code <= 102) return code - 87;
  if (code >= 65 && code <= 70) return code - 55;
  return -1;
}

/**
 * The candidate signatures of each distinct `t` within the tolerance (the others are never hashed),
 * and, when none is, whether the signed groups were too old or too new.
 */
function signaturesByFreshTimestamp(
  groups: readonly SignatureGroup[],
  nowSeconds: number,
  tolerance: number,
): { fresh: Map<number, Buffer[]>; staleness: 'too_old' | 'too_new' | undefined } {
  const fresh = new Map<number, Buffer[]>();
  let staleness: 'too_old' | 'too_new' | undefined;
  for (const group of groups) {
    if (group.signatures.length === 0) continue;
    const skew = nowSeconds - group.timestamp;
    if (skew > tolerance) staleness ??= 'too_old';
    else if (skew < -tolerance) staleness ??= 'too_new';
    else fresh.set(group.timestamp, [...(fresh.get(group.timestamp) ?? []), ...group.signatures]);
  }
  return { fresh, staleness };
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
