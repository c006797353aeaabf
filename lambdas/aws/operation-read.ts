/**
 * A poll's read of one operation: a consistent GetItem through the operation reads (the hot
 * GetItem, hot-get-item.ts), decoded into its record. Shared by the DynamoDB record store and
 * the MCP function's lazy one, which must answer a poll without loading the store's module.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import type { OperationKey, OperationRecord } from '../operations/operation.ts';
import { fromOperationItem, operationPk } from './operation-item.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';
import { RecordStoreError, storeCall } from './record-store-error.ts';

type Item = Record<string, AttributeValue>;

/** Sends a consistent GetItem and answers its `Item`, as `client.send(new GetItemCommand(...))` does. */
export interface OperationReads {
  send(request: { TableName: string; Key: Item; ConsistentRead: true }): Promise<{ Item?: Item }>;
}

/** The record at `key`, or undefined; a failed read is a RecordStoreError naming GetItem. */
export async function readOperation(reads: OperationReads, tableName: string, key: OperationKey): Promise<OperationRecord | undefined> {
  // Keyed before the call: a key over DynamoDB's limit is the caller's KeyTooLongError, not a failed read.
  const pk = operationPk(key);
  const { Item } = await storeCall('GetItem', () =>
    reads.send({ TableName: tableName, Key: { [OPERATIONS_TABLE.partitionKey]: { S: pk } }, ConsistentRead: true }),
  );
  return Item && decodeOperationItem(Item);
}

/** An operation item's record; an item that is not one is the store's error. */
export function decodeOperationItem(item: Item): OperationRecord {
  try {
    return fromOperationItem(item);
  } catch (error) {
    throw new RecordStoreError('Malformed operation item', { cause: error });
  }
}
