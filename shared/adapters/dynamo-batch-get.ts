import { BatchGetItemCommand, type AttributeValue, type DynamoDBClient, type KeysAndAttributes } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

/** BatchGetItem takes at most this many keys a call. */
const BATCH_GET_LIMIT = 100;
/** Rounds of retrying the keys DynamoDB left unprocessed before giving up (the caller's store error). */
const UNPROCESSED_ROUNDS = 5;

/**
 * Reads the items of `keys` from one table, consistently, 100 keys a call, retrying unprocessed keys a
 * few rounds; `read` adds a projection. Missing items are simply absent. `what` names the items in the error.
 */
export async function batchGetAll(
  client: DynamoDBClient,
  tableName: string,
  keys: readonly Item[],
  what: string,
  read: Omit<KeysAndAttributes, 'Keys' | 'ConsistentRead'> = {},
): Promise<Item[]> {
  const items: Item[] = [];
  for (let start = 0; start < keys.length; start += BATCH_GET_LIMIT) {
    let pending: Item[] = keys.slice(start, start + BATCH_GET_LIMIT);
    for (let round = 0; pending.length > 0; round++) {
      if (round === UNPROCESSED_ROUNDS) throw new Error(`${pending.length} ${what} items stayed unprocessed`);
      const result = await client.send(
        new BatchGetItemCommand({ RequestItems: { [tableName]: { ...read, Keys: pending, ConsistentRead: true } } }),
      );
      items.push(...(result.Responses?.[tableName] ?? []));
      pending = result.UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return items;
}
