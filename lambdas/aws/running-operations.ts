/**
 * The operations of one tool that have not ended, read from the operations table with a
 * Scan: an operator's look before removing the tool (drain it first), never a request
 * path. Only the fields that say which run it is are read (ProjectionExpression), so tool
 * arguments, results and the task tokens of open questions never leave the table.
 */
import { paginateScan, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { TERMINAL_STATUSES, type Dialect, type OperationStatus } from '../operations/operation.ts';
import { EXPIRES_AT, PK } from './operation-item.ts';

/** One operation that is still running, as the table holds it. */
export interface RunningOperation {
  /** The token or task id, as stored (the one the client holds; `sync-…` for a call a client waits on). */
  token: string;
  dialect: Dialect;
  status: OperationStatus;
  /** Epoch milliseconds. */
  createdAt: number;
  /** Absent while the record is `submitted` and its execution not yet started. */
  executionArn?: string;
  executionName: string;
}

export interface ListRunningOperationsInput {
  client: DynamoDBClient;
  tableName: string;
  tool: string;
  /** Epoch milliseconds; records past their `expiresAt` read as expired, so they are left out. */
  now?: number;
}

/**
 * Every operation of `tool` whose record is not terminal (submitted, working or
 * input_required) and not expired, oldest first. Reads the whole table, a page at a time.
 */
export async function listRunningOperations(input: ListRunningOperationsInput): Promise<RunningOperation[]> {
  const now = input.now ?? Date.now();
  const terminal = Object.fromEntries(TERMINAL_STATUSES.map((status, i) => [`:t${i}`, { S: status }]));
  const pages = paginateScan(
    { client: input.client },
    {
      TableName: input.tableName,
      // Slots, request aliases and execution pointers share the table: only `OP#` items are operations.
      FilterExpression: `begins_with(#pk, :op) AND #tool = :tool AND NOT (#status IN (${Object.keys(terminal).join(', ')}))`,
      ProjectionExpression: '#token, #dialect, #status, #createdAt, #executionArn, #executionName, #expiresAt',
      ExpressionAttributeNames: {
        '#pk': PK,
        '#tool': 'tool',
        '#token': 'token',
        '#dialect': 'dialect',
        '#status': 'status',
        '#createdAt': 'createdAt',
        '#executionArn': 'executionArn',
        '#executionName': 'executionName',
        '#expiresAt': EXPIRES_AT,
      },
      ExpressionAttributeValues: { ':op': { S: 'OP#' }, ':tool': { S: input.tool }, ...terminal },
    },
  );
  const running: RunningOperation[] = [];
  for await (const page of pages) {
    for (const item of page.Items ?? []) {
      const raw = unmarshall(item) as Record<string, unknown>;
      const expiresAt = raw[EXPIRES_AT];
      if (typeof expiresAt === 'number' && expiresAt * 1000 <= now) continue;
      running.push({
        token: String(raw.token),
        dialect: raw.dialect as Dialect,
        status: raw.status as OperationStatus,
        createdAt: Number(raw.createdAt),
        ...(typeof raw.executionArn === 'string' ? { executionArn: raw.executionArn } : {}),
        executionName: String(raw.executionName),
      });
    }
  }
  return running.sort((a, b) => a.createdAt - b.createdAt || a.token.localeCompare(b.token));
}
