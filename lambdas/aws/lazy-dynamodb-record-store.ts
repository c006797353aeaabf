/**
 * The MCP function's record store, whose DynamoDB half loads on first need: a poll's `get`
 * is the store's own read (operation-read.ts: one GetItem through the operation reads, a
 * HotGetItem), so a cold start that only polls never imports the store or the DynamoDB
 * client. Every other method (a start, a write, a listing) loads the store, whose start
 * writes then go over the client's hot wire (hot-dynamodb-writes.ts).
 */
import type { RecordStore } from '../operations/ports.ts';
import type { DynamoDbClientHandle } from './lazy-dynamodb-client.ts';
import { readOperation, type OperationReads } from './operation-read.ts';

export interface LazyDynamoDbRecordStoreOptions {
  readonly client: DynamoDbClientHandle;
  readonly tableName: string;
  readonly operationReads: OperationReads;
  /** Hears when the writes' hot wire is given up (every write then takes the SDK path). */
  readonly onWireDropped?: (reason: string) => void;
}

export function lazyDynamoDbRecordStore({ client, tableName, operationReads, onWireDropped }: LazyDynamoDbRecordStoreOptions): RecordStore {
  let loaded: Promise<RecordStore> | undefined;
  const store = () =>
    (loaded ??= Promise.all([client.get(), import('./dynamodb-record-store.ts'), import('./hot-dynamodb-writes.ts')]).then(
      ([built, { DynamoDbRecordStore }, { HotDynamoDbWrites }]) =>
        new DynamoDbRecordStore({ client: built, tableName, operationReads, writes: new HotDynamoDbWrites(built, { onWireDropped }) }),
    ));
  return {
    // The store's own get, before or after it is loaded: one GetItem through the operation reads.
    get: (key) => readOperation(operationReads, tableName, key),
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
