/**
 * The values the bridge puts on its buttons, signed. A button's value comes back in the click as the
 * clicker sent it, so anyone can put any value on a copied button: the value carries the project, its
 * name and the channel it was posted to, and an HMAC-SHA256 over them with the stage's action-signing
 * key (a secret the stack generates). A value that is unsigned, forged, cut or signed with a key the
 * stage no longer holds does not verify, and the click is refused.
 *
 * Keys rotate like signing secrets: a JSON array, newest first; values are signed with the first and
 * verified against every one, so buttons already posted keep working until the old key is dropped.
 */
import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import { ConfigError, optionalString, type Env } from '../config-env';
import { ENV, SLACK_APP_METRICS } from '../contracts';
import type { SecretSource } from '../ports';
import { verifierFromSecret, type SecretVerifierOptions, type VerifierSecretKind } from '../secrets';
import { isRecord, parseJsonOrUndefined } from '../util';

/** What a digest button acts on: the project, its name (for the reply) and the channel the digest was posted to. */
export interface ActionTarget {
  projectId: string;
  projectName: string;
  channel: string;
}

/** Signs button values and verifies them; built from the stage's keys (`actionValueCodec`). */
export interface ActionValueCodec {
  /** The value to put on a digest button for `target`, signed with the newest key; at most 2,000 characters (Slack's limit). */
  encode(target: ActionTarget): string;
  /** The target of a value this stage signed; null for anything else (unsigned, forged, cut, an old key dropped). */
  decode(value: unknown): ActionTarget | null;
  /** Any other button's fields (e.g. "Share in channel"), signed the same way; the key `s` is the signature's. */
  sign(fields: Readonly<Record<string, string>>): string;
  /** The fields of a value `sign` made with one of the stage's keys; null for anything else. */
  verify(value: unknown): Record<string, string> | null;
}

/** Slack caps a button value at 2,000 characters. */
export const MAX_BUTTON_VALUE = 2000;
/** Project names are cut in the value (the reply needs a name, not all of it). */
const MAX_NAME_IN_VALUE = 500;
/** 128 bits of HMAC-SHA256: far beyond guessing, short on the button. */
const MAC_BYTES = 16;
/** Keys shorter than this are refused: the stack generates 64 characters. */
export const MIN_ACTION_KEY_LENGTH = 32;
/** In the MAC input: a value of another format or version never verifies as this one. */
const MAC_CONTEXT = 'visibility-bridge/button-value/v1';
const SIGNATURE_FIELD = 's';
/** Marks a digest button's fields (`k`), so another signed button's value never reads as one. */
const DIGEST_BUTTON = 'digest';

export function actionValueCodec(keys: readonly string[]): ActionValueCodec {
  if (keys.length === 0) throw new Error('actionValueCodec needs at least one key');
  const keyObjects = keys.map((key) => createSecretKey(Buffer.from(key, 'utf8')));
  const [newest] = keyObjects as [KeyObject, ...KeyObject[]];
  const sign = (fields: Readonly<Record<string, string>>) => signFields(fields, newest);
  const verify = (value: unknown) => verifyFields(value, keyObjects);
  return { encode: (target) => encodeTarget(target, sign), decode: (value) => decodeTarget(verify(value)), sign, verify };
}

function encodeTarget(target: ActionTarget, sign: (fields: Record<string, string>) => string): string {
  // JSON escapes can make a name several times longer than its characters: cut until the value fits.
  for (let max = MAX_NAME_IN_VALUE; ; max = Math.floor(max / 2)) {
    const value = sign({ k: DIGEST_BUTTON, p: target.projectId, n: [...target.projectName].slice(0, max).join(''), c: target.channel });
    if (value.length <= MAX_BUTTON_VALUE || max === 0) return value;
  }
}

function decodeTarget(fields: Record<string, string> | null): ActionTarget | null {
  if (fields === null || fields['k'] !== DIGEST_BUTTON) return null;
  const { p, n, c } = fields;
  if (p === undefined || p === '' || c === undefined || c === '') return null;
  return { projectId: p, projectName: n === undefined || n === '' ? p : n, channel: c };
}

function signFields(fields: Readonly<Record<string, string>>, key: KeyObject): string {
  const { [SIGNATURE_FIELD]: _reserved, ...rest } = fields;
  return JSON.stringify({ ...rest, [SIGNATURE_FIELD]: mac(key, rest) });
}

function verifyFields(value: unknown, keys: readonly KeyObject[]): Record<string, string> | null {
  const parsed = parseJsonOrUndefined(value);
  if (!isRecord(parsed)) return null;
  const { [SIGNATURE_FIELD]: signature, ...rest } = parsed;
  if (typeof signature !== 'string' || !Object.values(rest).every((field) => typeof field === 'string')) return null;
  const fields = rest as Record<string, string>;
  const given = Buffer.from(signature, 'base64url');
  // base64url decoding skips stray characters: the text must be exactly the encoding of MAC_BYTES bytes.
  if (given.length !== MAC_BYTES || given.toString('base64url') !== signature) return null;
  const signed = keys.some((key) => timingSafeEqual(given, Buffer.from(mac(key, fields), 'base64url')));
  return signed ? fields : null;
}

/** Over the fields sorted by name, as one JSON array: no two different sets of fields give the same input. */
function mac(key: KeyObject, fields: Readonly<Record<string, string>>): string {
  const entries = Object.entries(fields).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHmac('sha256', key)
    .update(`${MAC_CONTEXT}\n${JSON.stringify(entries)}`)
    .digest()
    .subarray(0, MAC_BYTES)
    .toString('base64url');
}

const KEYS_MUST_BE = `must be a key of at least ${MIN_ACTION_KEY_LENGTH} visible ASCII characters, or a JSON array of them, newest first, while it is rotated`;

/**
 * The action-signing key as the stack stores it: one key, or a JSON array of keys (newest first).
 * Errors name the secret or variable and never hold the value.
 */
export function parseActionSigningKeys(raw: string, name: string): string[] {
  const value = raw.trim();
  let keys: unknown = [value];
  if (value.startsWith('[')) {
    try {
      keys = JSON.parse(value);
    } catch {
      throw new ConfigError(name, `${KEYS_MUST_BE}; its value is not JSON`);
    }
  }
  if (!Array.isArray(keys) || keys.length === 0) throw new ConfigError(name, KEYS_MUST_BE);
  return keys.map((key: unknown) => {
    if (typeof key !== 'string' || key.trim().length < MIN_ACTION_KEY_LENGTH || !/^[\x21-\x7e]+$/.test(key.trim()))
      throw new ConfigError(name, KEYS_MUST_BE);
    return key.trim();
  });
}

/** Where the key is: the stack's secret (its ARN), or locally the value itself. */
export type ActionSigningKeyRef = { secretArn: string } | { value: string };

/** The key's reference from the environment, checked at cold start; undefined when neither variable is set. */
export function readActionSigningKeyRef(env: Env): ActionSigningKeyRef | undefined {
  const secretArn = optionalString(env, ENV.actionSigningKeySecretArn);
  if (secretArn) return { secretArn };
  const value = optionalString(env, ENV.actionSigningKey);
  if (!value) return undefined;
  parseActionSigningKeys(value, ENV.actionSigningKey);
  return { value };
}

/** The action-signing key through the secret cache (../secrets): rebuilt when the secret's text changes, the last good one kept. */
export function actionSigningKeyKind(): VerifierSecretKind<ActionValueCodec> {
  return {
    label: 'action-signing key',
    parse: parseActionSigningKeys,
    build: actionValueCodec,
    metrics: { invalid: SLACK_APP_METRICS.actionSigningKeyUnusable, unreadable: SLACK_APP_METRICS.actionSigningKeyUnusable },
    putFix:
      'the stack generates this secret: restore its value (a random string of 64 letters and digits, or ["<new>", "<old>"] while rotating) or redeploy',
    refused: 'digest buttons',
  };
}

export function actionValueCodecFrom(source: SecretSource, options: SecretVerifierOptions): () => Promise<ActionValueCodec> {
  return verifierFromSecret(source, actionSigningKeyKind(), options);
}
