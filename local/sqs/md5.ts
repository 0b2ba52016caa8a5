import { createHash } from 'node:crypto';

/** A message attribute as stored: string-typed (String/Number) or binary. */
export interface MessageAttribute {
  readonly DataType: string;
  readonly StringValue?: string;
  readonly BinaryValue?: Buffer;
}

export function md5Hex(data: string | Buffer): string {
  return createHash('md5')
    .update(typeof data === 'string' ? Buffer.from(data, 'utf8') : data)
    .digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length, 0);
  return Buffer.concat([length, bytes]);
}

/**
 * MD5OfMessageAttributes as SQS computes it (and the Java/.NET SDKs verify it): attributes sorted by
 * name; for each, the name and the data type as 4-byte big-endian length + UTF-8 bytes, then a
 * transport byte (1 = string value, 2 = binary value) and the value, length-prefixed the same way.
 */
export function md5OfMessageAttributes(attributes: ReadonlyMap<string, MessageAttribute>): string | undefined {
  if (attributes.size === 0) return undefined;
  const hash = createHash('md5');
  // Default sort compares UTF-16 code units, as the Java SDK's TreeMap of names does.
  for (const name of [...attributes.keys()].sort()) {
    const attribute = attributes.get(name);
    if (attribute === undefined) continue;
    hash.update(lengthPrefixed(Buffer.from(name, 'utf8')));
    hash.update(lengthPrefixed(Buffer.from(attribute.DataType, 'utf8')));
    if (attribute.StringValue !== undefined) {
      hash.update(Buffer.from([1]));
      hash.update(lengthPrefixed(Buffer.from(attribute.StringValue, 'utf8')));
    } else if (attribute.BinaryValue !== undefined) {
      hash.update(Buffer.from([2]));
      hash.update(lengthPrefixed(attribute.BinaryValue));
    }
  }
  return hash.digest('hex');
}
