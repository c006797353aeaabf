/**
 * The operations table's item layout: keys, the record codec (`marshall`/`unmarshall`,
 * with `outcome` kept as JSON text), the owner index cursor, and DynamoDB's size rules.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { convertToAttr, marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { OperationChanges, OperationKey, OperationRecord } from '../operations/operation.ts';
import { InvalidCursorError } from '../operations/ports.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../shared/json-values.ts';
import { DYNAMODB_LIMITS, KeyTooLongError } from './dynamodb-limits.ts';
import { OPERATIONS_TABLE } from './operations-table.ts';

export type Item = Record<string, AttributeValue>;

export const PK = OPERATIONS_TABLE.partitionKey;
export const EXPIRES_AT = OPERATIONS_TABLE.ttlAttribute;
const OWNER_KEY = OPERATIONS_TABLE.ownerIndex.partitionKey;
const CREATED_KEY = OPERATIONS_TABLE.ownerIndex.sortKey;

const STRING_FIELDS = ['ownerId', 'token', 'tool', 'argumentsHash', 'dialect', 'status', 'executionName'] as const;
const NUMBER_FIELDS = ['createdAt', 'updatedAt', 'pollIntervalSeconds'] as const;
const OPTIONAL_STRING_FIELDS = ['statusMessage', 'executionArn', 'requestId'] as const;
const OPTIONAL_NUMBER_FIELDS = ['completedAt', 'expiresAt'] as const;

// Required fields are never removed, so `undefined` there means "leave as is".
const CLEARABLE_FIELDS = [
  'statusMessage',
  'executionArn',
  'completedAt',
  'expiresAt',
  'outcome',
  'pendingInputs',
  'usedInputKeys',
  'closedInputs',
  'reports',
] as const;
/** Attributes kept as JSON text, so any JSON (empty maps, nested nulls) round-trips exactly. */
const JSON_FIELDS: readonly string[] = ['outcome', 'pendingInputs', 'usedInputKeys', 'closedInputs', 'inputKinds', 'reports', 'resultContract', 'trace'];
const CHANGE_FIELDS = ['status', 'updatedAt', ...CLEARABLE_FIELDS] as const;

// Keys join owner and token with '#', so an owner id containing one would be ambiguous.
export function checkOwnerId(ownerId: string): void {
  if (ownerId.includes('#')) throw new RangeError('An owner id must not contain "#"');
}

/**
 * Checked here because dynalite counts UTF-16 code units where DynamoDB counts UTF-8
 * bytes: the local stack must refuse what AWS refuses.
 */
function partitionKey(pk: string): string {
  if (utf8(pk) > DYNAMODB_LIMITS.maxPartitionKeyBytes) throw new KeyTooLongError();
  return pk;
}

export function operationPk(key: OperationKey): string {
  checkOwnerId(key.ownerId);
  return partitionKey(`OP#${key.ownerId}#${key.token}`);
}

export function executionPointerPk(executionName: string): string {
  return partitionKey(`EXEC#${executionName}`);
}

export function logLevelPk(ownerId: string): string {
  checkOwnerId(ownerId);
  return partitionKey(`LOGLEVEL#${ownerId}`);
}

export function slotPk(ownerId: string): string {
  checkOwnerId(ownerId);
  return partitionKey(`ACTIVE#${ownerId}`);
}

export function ownerKey(ownerId: string): string {
  return partitionKey(`OWNER#${ownerId}`);
}

/** A number attribute; DynamoDB holds no NaN or infinity. */
export function numberAttribute(value: number): { N: string } {
  if (!Number.isFinite(value)) throw new RangeError('DynamoDB numbers must be finite');
  return { N: String(value) };
}

/** Zero-padded so the string sort is chronological; the token makes it unique. */
function createdKey(createdAt: number, token: string): string {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError('createdAt must be a non-negative integer');
  const key = `${String(createdAt).padStart(15, '0')}#${token}`;
  if (utf8(key) > DYNAMODB_LIMITS.maxSortKeyBytes) throw new KeyTooLongError();
  return key;
}

/** The item of a record, index attributes included; `outcome` is JSON text so any JSON round-trips exactly. */
export function toOperationItem(record: OperationRecord): Item {
  const { expiresAt, ...rest } = record;
  const asJson: Record<string, string | undefined> = {};
  for (const field of JSON_FIELDS) {
    const value = (record as unknown as Record<string, unknown>)[field];
    asJson[field] = value === undefined ? undefined : JSON.stringify(value);
  }
  return marshall(
    {
      ...rest,
      ...asJson,
      [PK]: operationPk(record),
      [OWNER_KEY]: ownerKey(record.ownerId),
      [CREATED_KEY]: createdKey(record.createdAt, record.token),
      [EXPIRES_AT]: expiresAt,
    },
    { removeUndefinedValues: true },
  );
}

/** The record an item holds; throws TypeError for an item that is not one. Unknown attributes are dropped. */
export function fromOperationItem(item: Item): OperationRecord {
  const raw = unmarshall(item) as Record<string, unknown>;
  const record: Record<string, unknown> = {};
  const take = (field: string, from: string, type: 'string' | 'number', optional: boolean) => {
    const value = raw[from];
    if (value === undefined && optional) return;
    if (typeof value !== type) throw new TypeError(`Malformed operation item: ${field} is not a ${type}`);
    record[field] = value;
  };
  for (const field of STRING_FIELDS) take(field, field, 'string', false);
  for (const field of NUMBER_FIELDS) take(field, field, 'number', false);
  for (const field of OPTIONAL_STRING_FIELDS) take(field, field, 'string', true);
  for (const field of OPTIONAL_NUMBER_FIELDS) take(field, field === 'expiresAt' ? EXPIRES_AT : field, 'number', true);
  const keepAlive = raw.keepAliveSeconds;
  if (keepAlive !== null && typeof keepAlive !== 'number') throw new TypeError('Malformed operation item: keepAliveSeconds');
  record.keepAliveSeconds = keepAlive;
  for (const field of JSON_FIELDS) {
    const value = raw[field];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new TypeError(`Malformed operation item: ${field} is not JSON text`);
    record[field] = JSON.parse(value);
  }
  return record as unknown as OperationRecord;
}

/** A transition's changes as attributes to SET and to REMOVE (a change present as `undefined` clears the field). */
export function encodeChanges(changes: OperationChanges): { set: Item; remove: string[] } {
  const set: Item = {};
  const remove: string[] = [];
  for (const field of CHANGE_FIELDS) {
    if (!Object.hasOwn(changes, field)) continue;
    const value = changes[field];
    const attribute = field === 'expiresAt' ? EXPIRES_AT : field;
    if (value !== undefined) set[attribute] = convertToAttr(JSON_FIELDS.includes(field) ? JSON.stringify(value) : value);
    else if ((CLEARABLE_FIELDS as readonly string[]).includes(field)) remove.push(attribute);
  }
  return { set, remove };
}

/**
 * An item's size as DynamoDB counts it: attribute names plus values, strings in UTF-8
 * bytes. Numbers count 21 bytes, DynamoDB's maximum, so this never undercounts.
 */
export function itemBytes(item: Item): number {
  let bytes = 0;
  for (const [name, value] of Object.entries(item)) bytes += utf8(name) + valueBytes(value);
  return bytes;
}

function valueBytes(value: AttributeValue): number {
  if (value.S !== undefined) return utf8(value.S);
  if (value.N !== undefined) return 21;
  if (value.B !== undefined) return value.B.byteLength;
  if (value.SS !== undefined) return value.SS.reduce((sum, s) => sum + utf8(s), 0);
  if (value.NS !== undefined) return value.NS.length * 21;
  if (value.BS !== undefined) return value.BS.reduce((sum, b) => sum + b.byteLength, 0);
  if (value.L !== undefined) return 3 + value.L.reduce((sum, v) => sum + 1 + valueBytes(v), 0);
  if (value.M !== undefined) return 3 + Object.keys(value.M).length + itemBytes(value.M);
  return 1; // NULL, BOOL
}

function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The index key of a record: what DynamoDB returns as LastEvaluatedKey for the index. */
export function indexKeyOf(record: OperationRecord): Item {
  return {
    [PK]: { S: operationPk(record) },
    [OWNER_KEY]: { S: ownerKey(record.ownerId) },
    [CREATED_KEY]: { S: createdKey(record.createdAt, record.token) },
  };
}

export function encodeCursor(key: Item): string {
  return encodeBase64UrlJson(key);
}

/** Accepts only an index key of this owner's records, so a cursor cannot reach another owner's partition. */
export function decodeCursor(ownerId: string, cursor: string): Item {
  const parsed = decodeBase64UrlJson(cursor);
  if (!parsed) throw new InvalidCursorError();
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
