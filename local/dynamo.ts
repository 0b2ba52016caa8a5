/**
 * DynamoDB for the local stack and tests: dynalite in-process (in memory, or on disk with a
 * directory), and the bridge's one table created as the stack creates it (pk: String).
 */
import dynalite from 'dynalite';
import { CreateTableCommand, ResourceInUseException, waitUntilTableExists, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createDynamoClient, LOCAL_CREDENTIALS } from '../shared/adapters/aws-clients';
import { TABLE } from '../shared/contracts';
import { closeServer, listen } from './http';

export interface LocalDynamo {
  endpoint: string;
  client: DynamoDBClient;
  close(): Promise<void>;
}

export async function startLocalDynamo(options: { port?: number; dataDir?: string } = {}): Promise<LocalDynamo> {
  const server = dynalite({
    createTableMs: 0,
    deleteTableMs: 0,
    updateTableMs: 0,
    ...(options.dataDir ? { path: options.dataDir } : {}),
  });
  const { url: endpoint } = await listen(server, options.port, '127.0.0.1');
  const client = createDynamoClient({
    endpoint,
    region: 'us-east-1',
    credentials: LOCAL_CREDENTIALS,
    // Generous: dynalite is in this process, and a busy event loop must not read as a dead peer.
    requestTimeoutMs: 30_000,
    connectionTimeoutMs: 10_000,
    maxAttempts: 3,
  });
  return {
    endpoint,
    client,
    close: async () => {
      client.destroy();
      await closeServer(server);
    },
  };
}

/** Creates the bridge table if it doesn't exist (idempotent, so a kept data directory just works). */
export async function ensureBridgeTable(client: DynamoDBClient, tableName: string): Promise<void> {
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        AttributeDefinitions: [{ AttributeName: TABLE.partitionKey, AttributeType: 'S' }],
        KeySchema: [{ AttributeName: TABLE.partitionKey, KeyType: 'HASH' }],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
  await waitUntilTableExists({ client, maxWaitTime: 30, minDelay: 1, maxDelay: 1 }, { TableName: tableName });
}
