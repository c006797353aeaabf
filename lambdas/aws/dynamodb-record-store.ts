/**
 * The RecordStore port over DynamoDB: one item per operation (`OP#<owner>#<token>`),
 * one per owner for active-operation slots and the request aliases of those operations
 * (`ACTIVE#<owner>`), and the `byOwner` index for listings. Every write that
 * changes status is conditional; a failed condition is an answer (`created: false`,
 * `undefined`, `refused`), any other failure a typed error.
 */
import {
  DeleteItemCommand,
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type UpdateItemCommandInput,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from '../operations/operation.ts';
import { MAX_REQUEST_ALIASES_PER_OPERATION, RecordTooLargeError } from '../operations/ports.ts';
import type { CreateResult, Page, RecordStore, RequestAlias, SlotAlias, SlotClaim } from '../operations/ports.ts';
import {
  EXPIRES_AT,
  PK,
  executionPointerPk,
  logLevelPk,
  checkOwnerId,
  decodeCursor,
  encodeChanges,
  encodeCursor,
  fromOperationItem,
  indexKeyOf,
  itemBytes,
  operationPk,
  ownerKey,
  slotPk,
  toOperationItem,
  type Item,
} from './operation-item.ts';
import { DYNAMODB_LIMITS, KeyTooLongError } from './dynamodb-limits.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';

/** Named conditions: `#pk` is the partition key, `#status` the status attribute, `#tokens` the slot set. */
const TOKEN_IS_NEW = 'attribute_not_exists(#pk)';
const ITEM_EXISTS = 'attribute_exists(#pk)';
const statusIsOneOf = (placeholders: readonly string[]) => `attribute_exists(#pk) AND #status IN (${placeholders.join(', ')})`;
const UPDATED_AT_IS = '#updatedAt = :ifUpdatedAt';
const SLOT_IS_FREE = '(attribute_not_exists(#tokens) OR size(#tokens) < :limit) AND NOT contains(#tokens, :token)';
const NO_SLOT_HELD = 'attribute_not_exists(#tokens)';

/**
 * A transition whose new values come this close to the item limit reads the item
 * first and measures the result, because DynamoDB counts UTF-8 bytes and dynalite
 * UTF-16 code units: without it, the local stack would accept what AWS refuses. What a
 * transition leaves alone (ids the core bounds to 1 KB each, names) stays well under it.
 */
const NEAR_ITEM_LIMIT_BYTES = 64 * 1024;

/** A DynamoDB call failed for a reason other than a condition; `cause` holds the SDK error. */
export class RecordStoreError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RecordStoreError';
  }
}

export interface DynamoDbRecordStoreOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/** `RecordStore` over the operations table (see `OPERATIONS_TABLE`). */
export class DynamoDbRecordStore implements RecordStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: DynamoDbRecordStoreOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async create(record: OperationRecord): Promise<CreateResult> {
    const item = toOperationItem(record);
    if (itemBytes(item) > DYNAMODB_LIMITS.maxItemBytes) throw new RecordTooLargeError();
    // A second round only if the existing item vanished (TTL) between the put and the read.
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.#client.send(
          new PutItemCommand({
            TableName: this.#tableName,
            Item: item,
            ConditionExpression: TOKEN_IS_NEW,
            ExpressionAttributeNames: { '#pk': PK },
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        return { created: true, record: decode(item) };
      } catch (error) {
        if (!isConditionFailure(error)) throw storeError('PutItem', error);
        // dynalite ignores ReturnValuesOnConditionCheckFailure, so fall back to a consistent read.
        const old = (error as { Item?: Item }).Item;
        const existing = old ? decode(old) : await this.get(record);
        if (existing) return { created: false, existing };
      }
    }
    throw new RecordStoreError('PutItem failed: the existing item kept disappearing');
  }

  async get(key: OperationKey): Promise<OperationRecord | undefined> {
    const item = await this.#getItem(operationPk(key));
    return item && decode(item);
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
    const updateExpression = [
      assignments.length > 0 ? `SET ${assignments.join(', ')}` : '',
      removals.length > 0 ? `REMOVE ${removals.join(', ')}` : '',
    ]
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
      return decode(Attributes);
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
    const page = items.slice(0, limit).map(decode);
    const last = page.at(-1);
    return items.length > limit && last ? { items: page, nextCursor: encodeCursor(indexKeyOf(last)) } : { items: page };
  }

  /** Last writer wins: JSON-RPC ids repeat across connections, and the newest request is the one a cancel names. */
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

  /**
   * Only while the token holds its slot: an alias of an operation that is over names nothing
   * to cancel. The token's newest few ids are listed beside the aliases (`ids#<token>`), and
   * the alias of an id that falls off the list goes in the same write, unless another token's
   * call has taken that id since. So retries under new ids never grow the slot item.
   */
  async putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const idsName = aliasIdsAttribute(alias.token);
    /** Ids falling off the list whose alias another token holds: left to that token. */
    const foreign = new Set<string>();
    for (let attempt = 0; attempt < ALIAS_WRITE_ATTEMPTS; attempt++) {
      const current = await this.#getSlotAttributes(ownerId, ['tokens', idsName]);
      if (!current?.tokens?.SS?.includes(alias.token)) return;
      const old = idsOf(current[idsName]);
      const ids = [...old.filter((id) => id !== requestId), requestId];
      const dropped = ids.splice(0, Math.max(0, ids.length - MAX_REQUEST_ALIASES_PER_OPERATION));
      const removed = dropped.filter((id) => !foreign.has(id));
      const names: Record<string, string> = { '#alias': aliasAttribute(requestId), '#ids': idsName, '#tokens': 'tokens' };
      const conditions = ['contains(#tokens, :token)', old.length === 0 ? 'attribute_not_exists(#ids)' : '#ids = :old'];
      removed.forEach((id, i) => {
        names[`#d${i}`] = aliasAttribute(id);
        names['#token'] = 'token';
        conditions.push(`(attribute_not_exists(#d${i}) OR #d${i}.#token = :token)`);
      });
      try {
        await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: `SET #alias = :alias, #ids = :ids${removed.length === 0 ? '' : ` REMOVE ${removed.map((_, i) => `#d${i}`).join(', ')}`}`,
            ConditionExpression: conditions.join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: {
              ':alias': aliasValue(alias),
              ':token': { S: alias.token },
              ':ids': idsValue(ids),
              ...(old.length === 0 ? {} : { ':old': idsValue(old) }),
            },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
      }
      // A race: the slot was released, the list changed, or a dropped id was taken by another call.
      if (removed.length === 0) continue;
      const aliases = await this.#getSlotAttributes(ownerId, removed.map(aliasAttribute));
      for (const id of removed) {
        const token = aliases?.[aliasAttribute(id)]?.M?.token?.S;
        if (token !== undefined && token !== alias.token) foreign.add(id);
      }
    }
  }

  /** Some attributes of the owner's slot item, read consistently. */
  async #getSlotAttributes(ownerId: string, attributes: readonly string[]): Promise<Item | undefined> {
    const names = Object.fromEntries(attributes.map((attribute, i) => [`#a${i}`, attribute]));
    const output = await this.#send('GetItem', () =>
      this.#client.send(
        new GetItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: slotPk(ownerId) } },
          ProjectionExpression: Object.keys(names).join(', '),
          ExpressionAttributeNames: names,
          ConsistentRead: true,
        }),
      ),
    );
    return output.Item;
  }

  async deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    // Most ids were never aliased: a read (a fifth of a write's price) spares the write.
    if (!(await this.findRequestAlias(ownerId, requestId))) return;
    await this.#updateSlotItem(ownerId, {
      UpdateExpression: 'REMOVE #alias',
      // Without it, an update of an absent item would create an empty one.
      ConditionExpression: ITEM_EXISTS,
      ExpressionAttributeNames: { '#pk': PK, '#alias': aliasAttribute(requestId) },
    });
  }

  /** A conditional update of the owner's slot item; a failed condition changes nothing and is no error. */
  async #updateSlotItem(ownerId: string, update: Omit<UpdateItemCommandInput, 'TableName' | 'Key'>): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    try {
      await this.#client.send(new UpdateItemCommand({ TableName: this.#tableName, Key, ...update }));
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
    }
  }

  async findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const output = await this.#send('GetItem', () =>
      this.#client.send(
        new GetItemCommand({
          TableName: this.#tableName,
          Key,
          ProjectionExpression: '#alias',
          ExpressionAttributeNames: { '#alias': aliasAttribute(requestId) },
          ConsistentRead: true,
        }),
      ),
    );
    const value = output.Item?.[aliasAttribute(requestId)];
    if (!value) return undefined;
    const token = value.M?.token?.S;
    const expiresAt = value.M?.[EXPIRES_AT]?.N;
    if (token === undefined || expiresAt === undefined) throw new RecordStoreError('Malformed request alias');
    return { token, expiresAt: Number(expiresAt) };
  }

  async putExecutionPointer(executionName: string, key: OperationKey, expiresAt: number): Promise<void> {
    operationPk(key);
    // No owner index attributes, so pointers never appear in listings.
    const item = {
      [PK]: { S: executionPointerPk(executionName) },
      ownerId: { S: key.ownerId },
      token: { S: key.token },
      [EXPIRES_AT]: number(expiresAt),
    };
    await this.#send('PutItem', () => this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: item })));
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
    const item = { [PK]: { S: logLevelPk(ownerId) }, level: { S: level }, [EXPIRES_AT]: number(expiresAt) };
    await this.#send('PutItem', () => this.#client.send(new PutItemCommand({ TableName: this.#tableName, Item: item })));
  }

  async findLogLevel(ownerId: string): Promise<{ level: string; expiresAt: number } | undefined> {
    const item = await this.#getItem(logLevelPk(ownerId));
    if (!item) return undefined;
    const level = item.level?.S;
    const expiresAt = item[EXPIRES_AT]?.N;
    if (level === undefined || expiresAt === undefined) throw new RecordStoreError('Malformed log level item');
    return { level, expiresAt: Number(expiresAt) };
  }


  /**
   * One conditional `ADD` to the owner's string set: atomic without a scan or a
   * transaction, and answering nothing back (the set can hold hundreds of tokens). Only a
   * refused write reads the set, to tell a token that already holds its slot (a retried
   * start) from a full set.
   */
  async claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    const Key = { [PK]: { S: slotPk(ownerId) } };
    try {
      await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key,
          // The request alias rides on the same write: a cancel by request id costs the start nothing extra.
          // A new slot's token has no ids listed yet: its list starts with this one.
          UpdateExpression: alias ? 'ADD #tokens :tokens SET #alias = :alias, #ids = :ids' : 'ADD #tokens :tokens',
          ConditionExpression: SLOT_IS_FREE,
          ExpressionAttributeNames: {
            '#tokens': 'tokens',
            ...(alias ? { '#alias': aliasAttribute(alias.requestId), '#ids': aliasIdsAttribute(token) } : {}),
          },
          ExpressionAttributeValues: {
            ':tokens': { SS: [token] },
            ':token': { S: token },
            ':limit': number(limit),
            ...(alias ? { ':alias': aliasValue({ token, expiresAt: alias.expiresAt }), ':ids': idsValue([alias.requestId]) } : {}),
          },
        }),
      );
      return 'claimed';
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
    }
    if (!(await this.listActiveSlots(ownerId)).includes(token)) return 'refused';
    if (alias) await this.putRequestAlias(ownerId, alias.requestId, { token, expiresAt: alias.expiresAt });
    return 'already-held';
  }

  /**
   * `DELETE` from the set, then drop the item once empty, so released owners leave nothing
   * behind. The token's list of ids goes in the same write (and the alias of `requestId`
   * with it, when it still names the token); the other ids its retries aliased follow, each
   * only while it still names the token.
   */
  async releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void> {
    const Key = { [PK]: { S: slotPk(ownerId) } };
    const idsName = aliasIdsAttribute(token);
    let before: Item | undefined;
    let aliasGone = false;
    if (requestId !== undefined) {
      // The slot and the alias in one write, when the alias still names this token.
      try {
        const output = await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: 'DELETE #tokens :tokens REMOVE #alias, #ids',
            ConditionExpression: '#alias.#token = :token',
            ExpressionAttributeNames: { '#tokens': 'tokens', '#alias': aliasAttribute(requestId), '#token': 'token', '#ids': idsName },
            ExpressionAttributeValues: { ':tokens': { SS: [token] }, ':token': { S: token } },
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        before = output.Attributes;
        aliasGone = true;
      } catch (error) {
        // A later call took the alias (or none was kept): release the slot alone.
        if (!isConditionFailure(error)) throw storeError('UpdateItem', error);
      }
    }
    if (!aliasGone) {
      try {
        const output = await this.#client.send(
          new UpdateItemCommand({
            TableName: this.#tableName,
            Key,
            UpdateExpression: 'DELETE #tokens :tokens REMOVE #ids',
            // Without it, an update of an absent item would create an empty one.
            ConditionExpression: ITEM_EXISTS,
            ExpressionAttributeNames: { '#pk': PK, '#tokens': 'tokens', '#ids': idsName },
            ExpressionAttributeValues: { ':tokens': { SS: [token] } },
            ReturnValues: 'UPDATED_OLD',
          }),
        );
        before = output.Attributes;
      } catch (error) {
        if (isConditionFailure(error)) return;
        throw storeError('UpdateItem', error);
      }
    }
    const remaining = (before?.tokens?.SS ?? []).filter((held) => held !== token);
    if (remaining.length === 0 && (await this.#dropIfEmpty(Key))) return;
    for (const id of idsOf(before?.[idsName])) {
      if (aliasGone && id === requestId) continue;
      await this.#updateSlotItem(ownerId, {
        UpdateExpression: 'REMOVE #alias',
        ConditionExpression: '#alias.#token = :token',
        ExpressionAttributeNames: { '#alias': aliasAttribute(id), '#token': 'token' },
        ExpressionAttributeValues: { ':token': { S: token } },
      });
    }
  }

  /** Drops the owner's slot item once no slot is held, and the aliases kept on it with it. */
  async #dropIfEmpty(Key: Item): Promise<boolean> {
    try {
      // Conditional, so a claim that slipped in between keeps its slot.
      await this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key,
          ConditionExpression: NO_SLOT_HELD,
          ExpressionAttributeNames: { '#tokens': 'tokens' },
        }),
      );
      return true;
    } catch (error) {
      if (!isConditionFailure(error)) throw storeError('DeleteItem', error);
      return false;
    }
  }

  async listActiveSlots(ownerId: string): Promise<string[]> {
    const item = await this.#getItem(slotPk(ownerId));
    return [...(item?.tokens?.SS ?? [])].sort();
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
    const output = await this.#send('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: pk } }, ConsistentRead: true })),
    );
    return output.Item;
  }

  async #query(ownerId: string, limit: number, startKey: Item | undefined) {
    return this.#send('Query', () =>
      this.#client.send(
        new QueryCommand({
        TableName: this.#tableName,
        IndexName: OPERATIONS_TABLE.ownerIndex.name,
        KeyConditionExpression: '#ownerKey = :ownerKey',
        ExpressionAttributeNames: { '#ownerKey': OPERATIONS_TABLE.ownerIndex.partitionKey },
        ExpressionAttributeValues: { ':ownerKey': { S: ownerKey(ownerId) } },
        ScanIndexForward: false,
        Limit: limit,
        ExclusiveStartKey: startKey,
        }),
      ),
    );
  }

  /** Runs a call whose every failure is a store error. */
  async #send<T>(operation: string, call: () => Promise<T>): Promise<T> {
    try {
      return await call();
    } catch (error) {
      throw storeError(operation, error);
    }
  }
}

function decode(item: Item): OperationRecord {
  try {
    return fromOperationItem(item);
  } catch (error) {
    throw new RecordStoreError('Malformed operation item', { cause: error });
  }
}

function number(value: number): { N: string } {
  if (!Number.isFinite(value)) throw new RangeError('DynamoDB numbers must be finite');
  return { N: String(value) };
}

function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

function storeError(operation: string, error: unknown): Error {
  if (error instanceof Error && error.name === 'ValidationException') {
    if (/item size.*exceeded the maximum allowed size/i.test(error.message)) return new RecordTooLargeError({ cause: error });
    if (/size of hashkey has exceeded|size of all range keys has exceeded/i.test(error.message)) {
      return new KeyTooLongError({ cause: error });
    }
  }
  // The SDK error's name only: its message may quote key values.
  const reason = error instanceof Error ? error.name : 'unknown error';
  return new RecordStoreError(`DynamoDB ${operation} failed: ${reason}`, { cause: error });
}

/** Request aliases live on the owner's slot item, one attribute per request id. */
function aliasAttribute(requestId: string): string {
  return `alias#${requestId}`;
}

/**
 * The newest request ids aliased to a token, oldest first, on the slot item beside the
 * aliases: one JSON string, so a write can be conditioned on the list it read (string
 * equality holds in every DynamoDB; list equality not in the local one).
 */
function aliasIdsAttribute(token: string): string {
  return `ids#${token}`;
}

function idsValue(ids: readonly string[]): Item[string] {
  return { S: JSON.stringify(ids) };
}

function idsOf(value: Item[string] | undefined): string[] {
  if (value?.S === undefined) return [];
  const ids: unknown = JSON.parse(value.S);
  if (!Array.isArray(ids) || !ids.every((id) => typeof id === 'string')) throw new RecordStoreError('Malformed request id list');
  return ids;
}

/** Attempts of an alias write that races other writes of the same slot item. */
const ALIAS_WRITE_ATTEMPTS = 3;

function aliasValue(alias: RequestAlias): Item[string] {
  return { M: { token: { S: alias.token }, [EXPIRES_AT]: number(alias.expiresAt) } };
}
