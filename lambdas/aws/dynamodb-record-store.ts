/**
 * The RecordStore port over DynamoDB: one item per operation (`OP#<owner>#<token>`),
 * one per request alias (`REQ#<owner>#<requestId>`), and the `byOwner` index for
 * listings. Every write that changes status is conditional; a failed condition is
 * an answer (`created: false`, `undefined`), any other failure a RecordStoreError.
 */
import {
  GetItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
  type AttributeValue,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';
import type { Dialect, OperationChanges, OperationKey, OperationRecord, OperationStatus, Outcome } from '../operations/operation.ts';
import type { CreateResult, Page, RecordStore } from '../operations/ports.ts';
import { InvalidCursorError, RecordTooLargeError } from '../operations/ports.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';

type Item = Record<string, AttributeValue>;

const PK = OPERATIONS_TABLE.partitionKey;
const OWNER_KEY = OPERATIONS_TABLE.ownerIndex.partitionKey;
const CREATED_KEY = OPERATIONS_TABLE.ownerIndex.sortKey;
const EXPIRES_AT = OPERATIONS_TABLE.ttlAttribute;

/** Named conditions: `#pk` is the partition key, `#status` the status attribute. */
const TOKEN_IS_NEW = 'attribute_not_exists(#pk)';
const statusIsOneOf = (placeholders: readonly string[]) => `attribute_exists(#pk) AND #status IN (${placeholders.join(', ')})`;

// Required fields are never removed, so `undefined` there means "leave as is".
const CLEARABLE_FIELDS = ['statusMessage', 'executionArn', 'completedAt', 'expiresAt', 'outcome', 'dialectState'] as const;
const CHANGE_FIELDS = ['status', 'updatedAt', ...CLEARABLE_FIELDS] as const;

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
    const item = toItem(record);
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
        return { created: true, record: fromItem(item) };
      } catch (error) {
        if (!isConditionFailure(error)) throw storeError('PutItem', error);
        // dynalite ignores ReturnValuesOnConditionCheckFailure, so fall back to a consistent read.
        const old = (error as { Item?: Item }).Item;
        const existing = old ? fromItem(old) : await this.get(record);
        if (existing) return { created: false, existing };
      }
    }
    throw new RecordStoreError('PutItem failed: the existing item kept disappearing');
  }

  async get(key: OperationKey): Promise<OperationRecord | undefined> {
    const item = await this.#getItem(operationPk(key));
    return item && fromItem(item);
  }

  /**
   * A change present with the value `undefined` REMOVEs that optional attribute
   * (e.g. a stale `statusMessage`), matching an object spread; an absent key leaves it.
   */
  async transition(
    key: OperationKey,
    from: readonly OperationStatus[],
    changes: OperationChanges,
  ): Promise<OperationRecord | undefined> {
    if (from.length === 0) return undefined;
    const names: Record<string, string> = { '#pk': PK, '#status': 'status' };
    const values: Item = {};
    const fromPlaceholders = from.map((status, index) => {
      values[`:from${index}`] = { S: status };
      return `:from${index}`;
    });
    const set: string[] = [];
    const remove: string[] = [];
    for (const field of CHANGE_FIELDS) {
      if (!Object.hasOwn(changes, field)) continue;
      const value = encodeChange(field, changes[field]);
      const attribute = field === 'expiresAt' ? EXPIRES_AT : field;
      if (value) {
        names[`#${field}`] = attribute;
        values[`:${field}`] = value;
        set.push(`#${field} = :${field}`);
      } else if ((CLEARABLE_FIELDS as readonly string[]).includes(field)) {
        names[`#${field}`] = attribute;
        remove.push(`#${field}`);
      }
    }
    if (set.length === 0 && remove.length === 0) {
      // Nothing to write: answer the condition with a read.
      const current = await this.get(key);
      return current && from.includes(current.status) ? current : undefined;
    }
    const updateExpression = [set.length > 0 ? `SET ${set.join(', ')}` : '', remove.length > 0 ? `REMOVE ${remove.join(', ')}` : '']
      .filter(Boolean)
      .join(' ');
    try {
      const { Attributes } = await this.#client.send(
        new UpdateItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: operationPk(key) } },
          UpdateExpression: updateExpression,
          ConditionExpression: statusIsOneOf(fromPlaceholders),
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      if (!Attributes) throw new RecordStoreError('UpdateItem returned no attributes');
      return fromItem(Attributes);
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
    const page = items.slice(0, limit).map(fromItem);
    const last = page.at(-1);
    return items.length > limit && last ? { items: page, nextCursor: encodeCursor(indexKeyOf(last)) } : { items: page };
  }

  /** Last writer wins: JSON-RPC ids repeat across connections, and the newest request is the one a cancel names. */
  async putRequestAlias(ownerId: string, requestId: string, token: string, expiresAt: number): Promise<void> {
    try {
      await this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          // No owner index attributes, so aliases never appear in listings.
          Item: { [PK]: { S: aliasPk(ownerId, requestId) }, token: { S: token }, [EXPIRES_AT]: number(expiresAt) },
        }),
      );
    } catch (error) {
      throw storeError('PutItem', error);
    }
  }

  async findTokenByRequestId(ownerId: string, requestId: string): Promise<string | undefined> {
    const item = await this.#getItem(aliasPk(ownerId, requestId));
    return item?.token?.S;
  }

  async #getItem(pk: string): Promise<Item | undefined> {
    try {
      const { Item } = await this.#client.send(
        new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: pk } }, ConsistentRead: true }),
      );
      return Item;
    } catch (error) {
      throw storeError('GetItem', error);
    }
  }

  async #query(ownerId: string, limit: number, startKey: Item | undefined) {
    try {
      return await this.#client.send(
        new QueryCommand({
          TableName: this.#tableName,
          IndexName: OPERATIONS_TABLE.ownerIndex.name,
          KeyConditionExpression: '#ownerKey = :ownerKey',
          ExpressionAttributeNames: { '#ownerKey': OWNER_KEY },
          ExpressionAttributeValues: { ':ownerKey': { S: ownerKey(ownerId) } },
          ScanIndexForward: false,
          Limit: limit,
          ExclusiveStartKey: startKey,
        }),
      );
    } catch (error) {
      throw storeError('Query', error);
    }
  }
}

// Keys join owner and token with '#', so an owner id containing one would be ambiguous.
function checkOwnerId(ownerId: string): void {
  if (ownerId.includes('#')) throw new RangeError('An owner id must not contain "#"');
}

function operationPk(key: OperationKey): string {
  checkOwnerId(key.ownerId);
  return `OP#${key.ownerId}#${key.token}`;
}

function aliasPk(ownerId: string, requestId: string): string {
  checkOwnerId(ownerId);
  return `REQ#${ownerId}#${requestId}`;
}

function ownerKey(ownerId: string): string {
  return `OWNER#${ownerId}`;
}

/** Zero-padded so the string sort is chronological; the token makes it unique. */
function createdKey(createdAt: number, token: string): string {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError('createdAt must be a non-negative integer');
  return `${String(createdAt).padStart(15, '0')}#${token}`;
}

/** The index key of a record: what DynamoDB returns as LastEvaluatedKey for the index. */
function indexKeyOf(record: OperationRecord): Item {
  return {
    [PK]: { S: operationPk(record) },
    [OWNER_KEY]: { S: ownerKey(record.ownerId) },
    [CREATED_KEY]: { S: createdKey(record.createdAt, record.token) },
  };
}

function encodeCursor(key: Item): string {
  return Buffer.from(JSON.stringify(key)).toString('base64url');
}

/** Accepts only an index key of this owner's records, so a cursor cannot reach another owner's partition. */
function decodeCursor(ownerId: string, cursor: string): Item {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (error) {
    throw new InvalidCursorError({ cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidCursorError();
  const entries = Object.entries(parsed);
  const text = (name: string) => {
    const value = (parsed as Record<string, unknown>)[name];
    const s = typeof value === 'object' && value !== null ? (value as Record<string, unknown>).S : undefined;
    return typeof s === 'string' && Object.keys(value as object).length === 1 ? s : undefined;
  };
  const pk = text(PK);
  const owner = text(OWNER_KEY);
  const created = text(CREATED_KEY);
  const match = created === undefined ? null : /^\d{15}#(.*)$/s.exec(created);
  if (entries.length !== 3 || owner !== ownerKey(ownerId) || !match || pk !== `OP#${ownerId}#${match[1]}`) {
    throw new InvalidCursorError();
  }
  return { [PK]: { S: pk }, [OWNER_KEY]: { S: owner }, [CREATED_KEY]: { S: created as string } };
}

function isConditionFailure(error: unknown): boolean {
  return error instanceof Error && error.name === 'ConditionalCheckFailedException';
}

function storeError(operation: string, error: unknown): Error {
  if (error instanceof Error && error.name === 'ValidationException' && /item size.*exceeded the maximum allowed size/i.test(error.message)) {
    return new RecordTooLargeError({ cause: error });
  }
  // The SDK error's name only: its message may quote key values.
  const reason = error instanceof Error ? error.name : 'unknown error';
  return new RecordStoreError(`DynamoDB ${operation} failed: ${reason}`, { cause: error });
}

function number(value: number): AttributeValue {
  if (!Number.isFinite(value)) throw new RangeError('DynamoDB numbers must be finite');
  return { N: String(value) };
}

/** Structured fields are JSON strings, so any JSON (empty strings, floats, nested nulls) round-trips exactly. */
function json(value: unknown): AttributeValue {
  return { S: JSON.stringify(value) };
}

function encodeChange<F extends (typeof CHANGE_FIELDS)[number]>(field: F, value: OperationChanges[F]): AttributeValue | undefined {
  if (value === undefined) return undefined;
  switch (field) {
    case 'updatedAt':
    case 'completedAt':
    case 'expiresAt':
      return number(value as number);
    case 'outcome':
    case 'dialectState':
      return json(value);
    default:
      return { S: value as string };
  }
}

function toItem(record: OperationRecord): Item {
  const item: Item = {
    [PK]: { S: operationPk(record) },
    [OWNER_KEY]: { S: ownerKey(record.ownerId) },
    [CREATED_KEY]: { S: createdKey(record.createdAt, record.token) },
    ownerId: { S: record.ownerId },
    token: { S: record.token },
    tool: { S: record.tool },
    argumentsHash: { S: record.argumentsHash },
    dialect: { S: record.dialect },
    status: { S: record.status },
    executionName: { S: record.executionName },
    createdAt: number(record.createdAt),
    updatedAt: number(record.updatedAt),
    keepAliveSeconds: record.keepAliveSeconds === null ? { NULL: true } : number(record.keepAliveSeconds),
    pollIntervalSeconds: number(record.pollIntervalSeconds),
  };
  if (record.statusMessage !== undefined) item.statusMessage = { S: record.statusMessage };
  if (record.executionArn !== undefined) item.executionArn = { S: record.executionArn };
  if (record.completedAt !== undefined) item.completedAt = number(record.completedAt);
  if (record.expiresAt !== undefined) item[EXPIRES_AT] = number(record.expiresAt);
  if (record.outcome !== undefined) item.outcome = json(record.outcome);
  if (record.requestId !== undefined) item.requestId = { S: record.requestId };
  if (record.dialectState !== undefined) item.dialectState = json(record.dialectState);
  return item;
}

function fromItem(item: Item): OperationRecord {
  const text = (name: string): string => {
    const value = item[name]?.S;
    if (value === undefined) throw new RecordStoreError(`Malformed operation item: ${name} is not a string`);
    return value;
  };
  const num = (name: string): number => {
    const value = item[name]?.N;
    if (value === undefined) throw new RecordStoreError(`Malformed operation item: ${name} is not a number`);
    return Number(value);
  };
  const parse = (name: string): unknown => {
    try {
      return JSON.parse(text(name));
    } catch (error) {
      throw new RecordStoreError(`Malformed operation item: ${name} is not JSON`, { cause: error });
    }
  };
  const record: OperationRecord = {
    ownerId: text('ownerId'),
    token: text('token'),
    tool: text('tool'),
    argumentsHash: text('argumentsHash'),
    dialect: text('dialect') as Dialect,
    status: text('status') as OperationStatus,
    executionName: text('executionName'),
    createdAt: num('createdAt'),
    updatedAt: num('updatedAt'),
    keepAliveSeconds: item.keepAliveSeconds?.NULL ? null : num('keepAliveSeconds'),
    pollIntervalSeconds: num('pollIntervalSeconds'),
  };
  if (item.statusMessage) record.statusMessage = text('statusMessage');
  if (item.executionArn) record.executionArn = text('executionArn');
  if (item.completedAt) record.completedAt = num('completedAt');
  if (item[EXPIRES_AT]) record.expiresAt = num(EXPIRES_AT);
  if (item.outcome) record.outcome = parse('outcome') as Outcome;
  if (item.requestId) record.requestId = text('requestId');
  if (item.dialectState) record.dialectState = parse('dialectState') as Record<string, unknown>;
  return record;
}
