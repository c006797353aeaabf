/**
 * The RecordStore port over DynamoDB. This module serves the records half: one item per
 * operation (`OP#<owner>#<token>`) and the `byOwner` index for listings, with the execution
 * pointers (`EXEC#<name>`) and log levels (`LOGLEVEL#<owner>`) beside them. The per-owner
 * slot item (`ACTIVE#<owner>`) is `DynamoDbActiveSlotStore`'s, to which the slot and alias
 * methods go. Every write that changes status is conditional; a failed condition is an
 * answer (`created: false`, `undefined`, `false`), any other failure a typed error.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from '../operations/operation.ts';
import { RecordTooLargeError } from '../operations/ports.ts';
import type { CreateResult, Page, RecordStore, RequestAlias, SlotAlias, SlotClaim } from '../operations/ports.ts';
import { DynamoDbActiveSlotStore } from './dynamodb-active-slot-store.ts';
import { DYNAMODB_LIMITS } from './dynamodb-limits.ts';
import { type DynamoDbWrites, sdkWrites } from './hot-dynamodb-writes.ts';
import {
  EXPIRES_AT,
  PK,
  checkOwnerId,
  decodeCursor,
  encodeChanges,
  encodeCursor,
  executionPointerPk,
  indexKeyOf,
  itemBytes,
  logLevelPk,
  numberAttribute,
  operationPk,
  ownerKey,
  toOperationItem,
  type Item,
} from './operation-item.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';
import { decodeOperationItem, readOperation, type OperationReads } from './operation-read.ts';
import { RecordStoreError, isConditionFailure, storeCall, storeError } from './record-store-error.ts';

/** Named conditions: `#pk` is the partition key, `#status` the status attribute, `#updatedAt` its time. */
const TOKEN_IS_NEW = 'attribute_not_exists(#pk)';
/** The record exists and its status is one of the `:from<n>` placeholders given. */
const statusIsOneOf = (placeholders: readonly string[]) => `attribute_exists(#pk) AND #status IN (${placeholders.join(', ')})`;
const UPDATED_AT_IS = '#updatedAt = :ifUpdatedAt';
/** The owner index's key condition: `#ownerKey` is its partition key. */
const OWNER_KEY_IS = '#ownerKey = :ownerKey';

/**
 * A transition whose new values come this close to the item limit reads the item
 * first and measures the result, because DynamoDB counts UTF-8 bytes and dynalite
 * UTF-16 code units: without it, the local stack would accept what AWS refuses. What a
 * transition leaves alone (ids the core bounds to 1 KB each, names) stays well under it.
 */
const NEAR_ITEM_LIMIT_BYTES = 64 * 1024;

export interface DynamoDbRecordStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
  /**
   * What sends `get`'s read of an operation item (the one call of a poll): the MCP function
   * and the local server pass a `HotGetItem` (lambdas/aws/hot-get-item.ts); by default the client.
   */
  readonly operationReads?: OperationReads;
  /**
   * What sends a start's conditional writes (the record's PutItem, the slot claim's UpdateItem):
   * the MCP function passes `HotDynamoDbWrites` (lambdas/aws/hot-dynamodb-writes.ts); by default the client.
   */
  readonly writes?: DynamoDbWrites;
}

/** `RecordStore` over the operations table (see `OPERATIONS_TABLE`); both halves share the client and the table. */
export class DynamoDbRecordStore implements RecordStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;
  readonly #slots: DynamoDbActiveSlotStore;
  readonly #operationReads: OperationReads;
  readonly #writes: DynamoDbWrites;

  constructor(options: DynamoDbRecordStoreOptions) {
    this.#client = options.client;
    // Without a hot read, the operation's GetItem goes through the client like the store's other reads.
    this.#operationReads = options.operationReads ?? { send: (request) => options.client.send(new GetItemCommand(request)) };
    this.#writes = options.writes ?? sdkWrites(options.client);
    this.#tableName = options.tableName;
    this.#slots = new DynamoDbActiveSlotStore({ ...options, writes: this.#writes });
  }

  async create(record: OperationRecord): Promise<CreateResult> {
    const item = toOperationItem(record);
    if (itemBytes(item) > DYNAMODB_LIMITS.maxItemBytes) throw new RecordTooLargeError();
    // A second round only if the existing item vanished (TTL) between the put and the read.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.#writes.putItem({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: TOKEN_IS_NEW,
          ExpressionAttributeNames: { '#pk': PK },
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        });
        return { created: true, record: decodeOperationItem(item) };
      } catch (error) {
        if (!isConditionFailure(error)) throw storeError('PutItem', error);
        // dynalite ignores ReturnValuesOnConditionCheckFailure, so fall back to a consistent read.
        const old = (error as { Item?: Item }).Item;
        const existing = old ? decodeOperationItem(old) : await this.get(record);
        if (existing) return { created: false, existing };
      }
    }
    throw new RecordStoreError('PutItem failed: the existing item kept disappearing');
  }

  get(key: OperationKey): Promise<OperationRecord | undefined> {
    return readOperation(this.#operationReads, this.#tableName, key);
  }

  /**
   * A change present with the value `undefined` REMOVEs that optional attribute
   * (e.g. a stale `statusMessage`), matching an object spread; an absent key leaves it.
   */
  async transition(
    key: OperationKey,
    from: readonly OperationStatus[],
    changes: OperationChanges,
    options: { ifUpdatedAt?: number } = {},
  ): Promise<OperationRecord | undefined> {
    const pk = operationPk(key);
    if (from.length === 0) return undefined;
    const { set, remove } = encodeChanges(changes);
    if (Object.keys(set).length === 0 && remove.length === 0) {
      // Nothing to write: answer the condition with a read.
      const current = await this.get(key);
      const matches = current && from.includes(current.status) && (options.ifUpdatedAt ?? current.updatedAt) === current.updatedAt;
      return matches ? current : undefined;
    }
    await this.#checkTransitionSize(pk, set, remove);
    const names: Record<string, string> = { '#pk': PK, '#status': 'status' };
    const values: Item = {};
    const fromPlaceholders = from.map((status, index) => {
      values[`:from${index}`] = { S: status };
      return `:from${index}`;
    });
    const conditions = [statusIsOneOf(fromPlaceholders)];
    if (options.ifUpdatedAt !== undefined) {
      names['#updatedAt'] = 'updatedAt';
      values[':ifUpdatedAt'] = { N: String(options.ifUpdatedAt) };
      conditions.push(UPDATED_AT_IS);
    }
    const assignments = Object.entries(set).map(([attribute, value], index) => {
      names[`#set${index}`] = attribute;
      values[`:set${index}`] = value;
      return `#set${index} = :set${index}`;
    });
    const removals = remove.map((attribute, index) => {
      names[`#remove${index}`] = attribute;
      return `#remove${index}`;
    });
    const updateExpression = [assignments.length > 0 ? `SET ${assignments.join(', ')}` : '', removals.length > 0 ? `REMOVE ${removals.join(', ')}` : '']
      .filter(Boolean)
      .join(' ');
    try {
      const { Attributes } = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: pk } },
          UpdateExpression: updateExpression,
          ConditionExpression: conditions.join(' AND '),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (!Attributes) throw new RecordStoreError('UpdateItem returned no attributes');
      return decodeOperationItem(Attributes);
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      if (error instanceof RecordStoreError) throw error;
      throw storeError('UpdateItem', error);
    }
  }

  async listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    checkOwnerId(ownerId);
    const { limit } = options;
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    let startKey = options.cursor === undefined ? undefined : decodeCursor(ownerId, options.cursor);
    // Read one item past the page so the last page carries no cursor; the loop also
    // continues past DynamoDB's 1 MB response limit.
    const items: Item[] = [];
    do {
      const output = await this.#query(ownerId, limit + 1 - items.length, startKey);
      items.push(...(output.Items ?? []));
      startKey = output.LastEvaluatedKey;
    } while (startKey && items.length <= limit);
    const page = items.slice(0, limit).map(decodeOperationItem);
    const last = page.at(-1);
    return items.length > limit && last ? { items: page, nextCursor: encodeCursor(indexKeyOf(last)) } : { items: page };
  }

  /** Conditional on the status, like a transition: a record another writer has moved on since (a cancel) is never deleted from under it. */
  async discard(key: OperationKey, from: readonly OperationStatus[]): Promise<boolean> {
    if (from.length === 0) return false;
    const values: Item = {};
    const placeholders = from.map((status, index) => {
      values[`:from${index}`] = { S: status };
      return `:from${index}`;
    });
    try {
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: operationPk(key) } },
          ConditionExpression: statusIsOneOf(placeholders),
          ExpressionAttributeNames: { '#pk': PK, '#status': 'status' },
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw storeError('DeleteItem', error);
    }
  }

  async putExecutionPointer(executionName: string, key: OperationKey, expiresAt: number): Promise<void> {
    operationPk(key);
    // No owner index attributes, so pointers never appear in listings.
    const item = {
      [PK]: { S: executionPointerPk(executionName) },
      ownerId: { S: key.ownerId },
      token: { S: key.token },
      [EXPIRES_AT]: numberAttribute(expiresAt),
    };
    await storeCall('PutItem', () => this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: item })));
  }

  async findExecutionPointer(executionName: string): Promise<(OperationKey & { expiresAt: number }) | undefined> {
    const item = await this.#getItem(executionPointerPk(executionName));
    if (!item) return undefined;
    const ownerId = item.ownerId?.S;
    const token = item.token?.S;
    const expiresAt = item[EXPIRES_AT]?.N;
    if (ownerId === undefined || token === undefined || expiresAt === undefined) throw new RecordStoreError('Malformed execution pointer item');
    return { ownerId, token, expiresAt: Number(expiresAt) };
  }

  async putLogLevel(ownerId: string, level: string, expiresAt: number): Promise<void> {
    const item = { [PK]: { S: logLevelPk(ownerId) }, level: { S: level }, [EXPIRES_AT]: numberAttribute(expiresAt) };
    await storeCall('PutItem', () => this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: item })));
  }

  async findLogLevel(ownerId: string): Promise<{ level: string; expiresAt: number } | undefined> {
    const item = await this.#getItem(logLevelPk(ownerId));
    if (!item) return undefined;
    const level = item.level?.S;
    const expiresAt = item[EXPIRES_AT]?.N;
    if (level === undefined || expiresAt === undefined) throw new RecordStoreError('Malformed log level item');
    return { level, expiresAt: Number(expiresAt) };
  }

  claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    return this.#slots.claimActiveSlot(ownerId, token, limit, alias);
  }

  releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void> {
    return this.#slots.releaseActiveSlot(ownerId, token, requestId);
  }

  listActiveSlots(ownerId: string): Promise<string[]> {
    return this.#slots.listActiveSlots(ownerId);
  }

  putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    return this.#slots.putRequestAlias(ownerId, requestId, alias);
  }

  deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    return this.#slots.deleteRequestAlias(ownerId, requestId);
  }

  findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    return this.#slots.findRequestAlias(ownerId, requestId);
  }

  /** Refuses, before writing, a transition that would leave the item over DynamoDB's limit. */
  async #checkTransitionSize(pk: string, set: Item, remove: readonly string[]): Promise<void> {
    const setBytes = itemBytes(set);
    if (setBytes > DYNAMODB_LIMITS.maxItemBytes) throw new RecordTooLargeError();
    if (setBytes <= DYNAMODB_LIMITS.maxItemBytes - NEAR_ITEM_LIMIT_BYTES) return;
    const current = await this.#getItem(pk);
    if (!current) return; // The conditional update will answer `undefined`.
    const next: Item = { ...current, ...set };
    for (const attribute of remove) delete next[attribute];
    if (itemBytes(next) > DYNAMODB_LIMITS.maxItemBytes) throw new RecordTooLargeError();
  }

  async #getItem(pk: string): Promise<Item | undefined> {
    const output = await storeCall('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: pk } }, ConsistentRead: true })),
    );
    return output.Item;
  }

  async #query(ownerId: string, limit: number, startKey: Item | undefined) {
    return storeCall('Query', () =>
      this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          IndexName: OPERATIONS_TABLE.ownerIndex.name,
          KeyConditionExpression: OWNER_KEY_IS,
          ExpressionAttributeNames: { '#ownerKey': OPERATIONS_TABLE.ownerIndex.partitionKey },
          ExpressionAttributeValues: { ':ownerKey': { S: ownerKey(ownerId) } },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: startKey,
        }),
      ),
    );
  }
}
