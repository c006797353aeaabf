/**
 * The local DynamoDB: dynalite on 127.0.0.1 in a process of its own, as DynamoDB is a
 * service of its own in AWS (so its memory and CPU are not the server's), in memory or
 * persisted in a data directory, with the operations table created on start. Its client
 * enforces DynamoDB's size limits in UTF-8 bytes (dynamo-limits.ts). dynalite implements
 * neither TTL (the local stack runs a sweeper, dynamo-ttl-sweeper.ts) nor transactions, so
 * nothing that runs against it may rely on them.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { setTimeout as sleep } from 'node:timers/promises';
import { CreateTableCommand, DescribeTableCommand, DynamoDBClient, type CreateTableCommandInput } from '@aws-sdk/client-dynamodb';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { OPERATIONS_TABLE } from '../../lambdas/aws/operations-table.ts';
import { installDynamoLimits } from './dynamo-limits.ts';

const PROCESS_ENTRY = fileURLToPath(new URL('./dynalite-process.mjs', import.meta.url));
/** How long dynalite may take to close its database before it is killed. */
const CLOSE_GRACE_MS = 5000;
/** dynalite processes still running; one exit hook for all of them. */
const children = new Set<ChildProcess>();
let exitHook = false;

/** Table name used when none is given. */
export const DEFAULT_TABLE_NAME = 'async-mcp-operations';

export interface LocalDynamoOptions {
  /** Persist under this directory (LevelDB); in memory when absent. */
  readonly dataDir?: string;
  /** @default a free port */
  readonly port?: number;
  /** @default DEFAULT_TABLE_NAME */
  readonly tableName?: string;
  /** The table's keys and indexes (a deployed template's); @default the operations table's, from OPERATIONS_TABLE */
  readonly schema?: TableSchema;
}

/** What CreateTable needs of a table beyond its name. */
export type TableSchema = Pick<CreateTableCommandInput, 'KeySchema' | 'AttributeDefinitions' | 'GlobalSecondaryIndexes'>;

export interface LocalDynamo {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  /** A client for the endpoint, with placeholder credentials dynalite accepts and DynamoDB's size limits. */
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /** The id of dynalite's process. */
  readonly pid: number;
  /** Destroys the client and stops dynalite's process; safe to call twice. */
  close(): Promise<void>;
}

/**
 * Starts dynalite in its own process and makes sure the operations table exists
 * (idempotent across restarts on one `dataDir`). The process ends with `close()`, and
 * with this process, however it ends.
 */
export async function startLocalDynamo(options: LocalDynamoOptions = {}): Promise<LocalDynamo> {
  if (options.dataDir !== undefined) await mkdir(options.dataDir, { recursive: true });
  const child = fork(PROCESS_ENTRY, [JSON.stringify({ dataDir: options.dataDir, port: options.port })], {
    // Not this process's flags (loaders, inspector): dynalite is plain JavaScript. A small young
    // generation and size-optimized code keep its memory near what it stores (about 8 KiB
    // per waiting operation instead of 20); dynalite is a small share of a request's CPU.
    execArgv: ['--max-semi-space-size=1', '--optimize-for-size'],
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  // A parent that exits without close() takes dynalite along (it closes its database on
  // SIGTERM); a killed parent too: the child sees the IPC channel close.
  children.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const running of children) running.kill('SIGTERM');
    });
  }
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  void exited.then(() => children.delete(child));
  let port: number;
  try {
    port = await readyPort(child);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    ...AWS_CLIENT_CONFIG,
    endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  installDynamoLimits(client);
  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      client.destroy();
      if (child.exitCode === null && child.signalCode === null) {
        // A dynalite already dying (a signal to the whole process group) refuses the message: kill it instead.
        if (child.connected) child.send({ close: true }, (error) => error && child.kill('SIGTERM'));
        else child.kill('SIGTERM');
        const killer = setTimeout(() => child.kill('SIGKILL'), CLOSE_GRACE_MS);
        await exited;
        clearTimeout(killer);
      }
    })());
  const tableName = options.tableName ?? DEFAULT_TABLE_NAME;
  try {
    await createOperationsTable(client, tableName, options.schema);
  } catch (error) {
    await close();
    throw error;
  }
  const { pid } = child;
  if (pid === undefined) {
    await close();
    throw new Error('dynalite has no process id: it did not start');
  }
  return { endpoint, client, tableName, pid, close };
}

/** The port dynalite's process reports once it listens. */
function readyPort(child: ChildProcess): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const onMessage = (message: unknown) => {
      const { port, error } = (message ?? {}) as { port?: unknown; error?: unknown };
      done();
      if (typeof port === 'number' && port > 0) resolve(port);
      else reject(new Error(`dynalite did not start: ${typeof error === 'string' ? error : 'no port reported'}`));
    };
    const onExit = (code: number | null, signal: string | null) => {
      done();
      reject(new Error(`dynalite's process exited before it listened (${signal ?? `code ${code}`})`));
    };
    const onError = (error: Error) => {
      done();
      reject(error);
    };
    const done = () => {
      child.off('message', onMessage);
      child.off('exit', onExit);
      child.off('error', onError);
    };
    child.on('message', onMessage);
    child.on('exit', onExit);
    child.on('error', onError);
  });
}

/**
 * Creates the operations table with its `byOwner` index unless it exists, then
 * waits until table and index are ACTIVE. The shape follows `OPERATIONS_TABLE`.
 */
export async function createOperationsTable(client: DynamoDBClient, tableName: string, schema?: TableSchema): Promise<void> {
  const index = OPERATIONS_TABLE.ownerIndex;
  try {
    await client.send(
      new CreateTableCommand({
        TableName: tableName,
        BillingMode: 'PAY_PER_REQUEST',
        // A deployed template's shape, else the operations table's.
        ...(schema ?? {
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
