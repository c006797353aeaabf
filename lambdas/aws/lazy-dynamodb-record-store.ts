/**
 * The MCP function's record store, whose DynamoDB half loads on first need: a poll's `get`
 * is one GetItem through the operation reads (a HotGetItem), read and decoded here as
 * `DynamoDbRecordStore.get` does, so a cold start that only polls never imports the store
 * or the DynamoDB client. Every other method (a start, a write, a listing) loads the store,
 * and from then on `get` is the store's own.
 */
import type { OperationRecord } from '../operations/operation.ts';
import type { RecordStore } from '../operations/ports.ts';
import type { OperationReads } from './dynamodb-record-store.ts';
import type { DynamoDbClientHandle } from './lazy-dynamodb-client.ts';
import { fromOperationItem, operationPk, PK, type Item } from './operation-item.ts';
import { RecordStoreError, storeCall } from './record-store-error.ts';

export interface LazyDynamoDbRecordStoreOptions {
  readonly client: DynamoDbClientHandle;
  readonly tableName: string;
  readonly operationReads: OperationReads;
}

export function lazyDynamoDbRecordStore({ client, tableName, operationReads }: LazyDynamoDbRecordStoreOptions): RecordStore {
  let loaded: Promise<RecordStore> | undefined;
  const store = () =>
    (loaded ??= Promise.all([client.get(), import('./dynamodb-record-store.ts')]).then(
      ([built, { DynamoDbRecordStore }]) => new DynamoDbRecordStore({ client: built, tableName, operationReads }),
    ));
  return {
    get: async (key) => {
      if (loaded) return (await loaded).get(key);
      const { Item } = await storeCall('GetItem', () =>
        operationReads.send({ TableName: tableName, Key: { [PK]: { S: operationPk(key) } }, ConsistentRead: true }),
      );
      return Item && decode(Item);
    },
    create: async (record) => (await store()).create(record),
    transition: async (key, from, changes, options) => (await store()).transition(key, from, changes, options),
    discard: async (key, from) => (await store()).discard(key, from),
    listByOwner: async (ownerId, options) => (await store()).listByOwner(ownerId, options),
    putExecutionPointer: async (executionName, key, expiresAt) => (await store()).putExecutionPointer(executionName, key, expiresAt),
    findExecutionPointer: async (executionName) => (await store()).findExecutionPointer(executionName),
    putLogLevel: async (ownerId, level, expiresAt) => (await store()).putLogLevel(ownerId, level, expiresAt),
    findLogLevel: async (ownerId) => (await store()).findLogLevel(ownerId),
    claimActiveSlot: async (ownerId, token, limit, alias) => (await store()).claimActiveSlot(ownerId, token, limit, alias),
    releaseActiveSlot: async (ownerId, token, requestId) => (await store()).releaseActiveSlot(ownerId, token, requestId),
    listActiveSlots: async (ownerId) => (await store()).listActiveSlots(ownerId),
    putRequestAlias: async (ownerId, requestId, alias) => (await store()).putRequestAlias(ownerId, requestId, alias),
    deleteRequestAlias: async (ownerId, requestId) => (await store()).deleteRequestAlias(ownerId, requestId),
    findRequestAlias: async (ownerId, requestId) => (await store()).findRequestAlias(ownerId, requestId),
  };
}

/** As the store decodes an item: one that is not an operation record is the store's error. */
function decode(item: Item): OperationRecord {
  try {
    return fromOperationItem(item);
  } catch (error) {
    throw new RecordStoreError('Malformed operation item', { cause: error });
  }
}
