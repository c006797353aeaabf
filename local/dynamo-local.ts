/**
 * The local DynamoDB: dynalite on 127.0.0.1, in memory or persisted in a data
 * directory, with the operations table created on start. Its client enforces DynamoDB's
 * size limits in UTF-8 bytes (dynamo-limits.ts). dynalite implements neither TTL (the
 * local stack runs a sweeper, dynamo-ttl-sweeper.ts) nor transactions, so nothing that
 * runs against it may rely on them.
 */
import { mkdir } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRequire } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OPERATIONS_TABLE } from '../lambdas/aws/operations-table.ts';
import { installDynamoLimits } from './dynamo-limits.ts';

const require = createRequire(import.meta.url);
type Dynalite = (options: {
  path?: string;
  createTableMs?: number;
  deleteTableMs?: number;
  updateTableMs?: number;
}) => Server;
const dynalite = require('dynalite') as Dynalite;

/** Table name used when none is given. */
export const DEFAULT_TABLE_NAME = 'async-mcp-operations';

export interface LocalDynamoOptions {
  /** Persist under this directory (LevelDB); in memory when absent. */
  readonly dataDir?: string;
  /** @default a free port */
  readonly port?: number;
  /** @default DEFAULT_TABLE_NAME */
  readonly tableName?: string;
}

export interface LocalDynamo {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** A client for the endpoint, with placeholder credentials dynalite accepts and DynamoDB's size limits. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** Destroys the client and stops the server; safe to call twice. */
  close(): Promise<void>;
}

/** Starts dynalite and makes sure the operations table exists (idempotent across restarts on one `dataDir`). */
export async function startLocalDynamo(options: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  if (options.dataDir !== undefined) await mkdir(options.dataDir, { recursive: true });
  // Table state changes take dynalite 500 ms by default; locally there is no reason to wait.
  const server = dynalite({ path: options.dataDir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  installDynamoLimits(client);
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      client.destroy();
      await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
    })());
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  try {
    await createOperationsTable(client, tableName);
  } catch (error) {
    await close();
    throw error;
  }
  return { endpoint, client, tableName, close };
}

/**
 * Creates the operations table with its `byOwner` index unless it exists, then
 * waits until table and index are ACTIVE. The shape follows `OPERATIONS_TABLE`.
 */
export async function createOperationsTable(client: DynamoDBClient, tableName: string): Promise<void> {
  const index = OPERATIONS_TABLE.ownerIndex;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        AttributeDefinitions: [
          { AttributeName: OPERATIONS_TABLE.partitionKey, AttributeType: 'S' },
          { AttributeName: index.partitionKey, AttributeType: 'S' },
          { AttributeName: index.sortKey, AttributeType: 'S' },
        ],
        KeySchema: [{ AttributeName: OPERATIONS_TABLE.partitionKey, KeyType: 'HASH' }],
        GlobalSecondaryIndexes: [
          {
            IndexName: index.name,
            KeySchema: [
              { AttributeName: index.partitionKey, KeyType: 'HASH' },
              { AttributeName: index.sortKey, KeyType: 'RANGE' },
            ],
            Projection: { ProjectionType: 'ALL' },
          },
        ],
      }),
    );
  } catch (error) {
    // Already there (a restart on the same data directory, or a concurrent creator).
    if (!(error instanceof Error && error.name === 'ResourceInUseException')) throw error;
  }
  await waitUntilActive(client, tableName);
}

async function waitUntilActive(client: DynamoDBClient, tableName: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const { Table } = await client.send(new DescribeTableCommand({ TableName: tableName }));
    const indexes = Table?.GlobalSecondaryIndexes ?? [];
    if (Table?.TableStatus === 'ACTIVE' && indexes.every((index) => index.IndexStatus === 'ACTIVE')) return;
    if (Date.now() > deadline) throw new Error(`Table ${tableName} did not become ACTIVE`);
    await sleep(20);
  }
}
