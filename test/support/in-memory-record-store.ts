/**
 * An in-memory RecordStore for unit tests of the core. It keeps the DynamoDB
 * adapter's semantics (conditional create and transition, newest-first owner
 * listing with an opaque cursor, key and item size limits, optionally a lagging owner
 * index), and the shared contract suite holds both to the same behaviour. Like the
 * DynamoDB store, it serves the records half here and hands the slot item's half to
 * `InMemoryActiveSlotStore`. Imitating DynamoDB, it takes DynamoDB's numbers from the
 * adapter's dependency-free limits module, the one place they live.
 */
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from '../../lambdas/operations/operation.ts';
import { DYNAMODB_LIMITS, KeyTooLongError } from '../../lambdas/aws/dynamodb-limits.ts';
import {
  InvalidCursorError,
  RecordTooLargeError,
  type CreateResult,
  type Page,
  type RecordStore,
  type RequestAlias,
  type SlotAlias,
  type SlotClaim,
} from '../../lambdas/operations/ports.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../../lambdas/shared/json-values.ts';
import { InMemoryActiveSlotStore } from './in-memory-active-slot-store.ts';
import { checkExpiresAt, checkLimit, checkOwnerId, checkPartitionKey, utf8 } from './in-memory-store-checks.ts';

/** DynamoDB's item size limit, which this store approximates. */
export const DEFAULT_MAX_RECORD_BYTES = DYNAMODB_LIMITS.maxItemBytes;

export interface InMemoryRecordStoreOptions {
  /**
   * Item size limit, measured the way DynamoDB does (see {@link operationItemBytes}).
   * @default DEFAULT_MAX_RECORD_BYTES
   */
  readonly maxRecordBytes?: number;
  /**
   * Delay before `listByOwner` sees a create or transition, like a DynamoDB global
   * secondary index (eventually consistent). Base-table reads stay strongly consistent.
   * @default 0
   */
  readonly indexLagMs?: number;
}

type ChangeField = keyof OperationChanges;

// Required fields are never cleared, so `undefined` there means "leave as is".
const CLEARABLE_FIELDS: readonly ChangeField[] = [
  'statusMessage',
  'executionArn',
  'completedAt',
  'expiresAt',
  'outcome',
  'pendingInputs',
  'usedInputKeys',
  'closedInputs',
  'reports',
];
const CHANGE_FIELDS: readonly ChangeField[] = ['status', 'updatedAt', ...CLEARABLE_FIELDS];

/** A version of a record as the owner index sees it, from `visibleAt` (epoch ms) on. */
interface IndexVersion {
  visibleAt: number;
  /** `undefined`: the record was deleted. */
  record: OperationRecord | undefined;
}

/** In-memory `RecordStore`; stores and returns deep copies, so callers cannot mutate stored state. */
export class InMemoryRecordStore implements RecordStore {
  readonly #records = new Map<string, OperationRecord>();
  /** Per record, the versions not yet superseded in the index, oldest first. */
  readonly #index = new Map<string, IndexVersion[]>();
  readonly #executionPointers = new Map<string, OperationKey & { expiresAt: number }>();
  readonly #slots: InMemoryActiveSlotStore;
  readonly #logLevels = new Map<string, { level: string; expiresAt: number }>();
  readonly #maxRecordBytes: number;
  readonly #indexLagMs: number;

  constructor(options: InMemoryRecordStoreOptions = {}) {
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.#indexLagMs = options.indexLagMs ?? 0;
    this.#slots = new InMemoryActiveSlotStore({ maxItemBytes: this.#maxRecordBytes });
  }

  async create(record: OperationRecord): Promise<CreateResult> {
    const key = recordKey(record);
    checkCreatedAt(record.createdAt);
    checkSortKey(record);
    const existing = this.#records.get(key);
    if (existing) return { created: false, existing: copyRecord(existing) };
    const stored = copyRecord(record);
    this.#checkSize(stored);
    this.#write(key, stored);
    return { created: true, record: copyRecord(stored) };
  }

  async get(key: OperationKey): Promise<OperationRecord | undefined> {
    const stored = this.#records.get(recordKey(key));
    return stored && copyRecord(stored);
  }

  async transition(
    key: OperationKey,
    from: readonly OperationStatus[],
    changes: OperationChanges,
    options: { ifUpdatedAt?: number } = {},
  ): Promise<OperationRecord | undefined> {
    const mapKey = recordKey(key);
    const current = this.#records.get(mapKey);
    if (!current || !from.includes(current.status)) return undefined;
    if (options.ifUpdatedAt !== undefined && current.updatedAt !== options.ifUpdatedAt) return undefined;
    const next: Record<string, unknown> = { ...current };
    let changed = false;
    for (const field of CHANGE_FIELDS) {
      if (!Object.hasOwn(changes, field)) continue;
      const value = changes[field];
      if (value !== undefined) next[field] = value;
      else if (CLEARABLE_FIELDS.includes(field)) delete next[field];
      else continue;
      changed = true;
    }
    // Nothing to write: DynamoDB would not touch the item either.
    if (!changed) return copyRecord(current);
    const updated = copyRecord(next as unknown as OperationRecord);
    this.#checkSize(updated);
    this.#write(mapKey, updated);
    return copyRecord(updated);
  }

  async listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    checkOwnerId(ownerId);
    checkPartitionKey('OWNER', ownerId);
    checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(ownerId, options.cursor);
    const newestFirst = this.#visibleInIndex()
      .filter((record) => record.ownerId === ownerId)
      .map((record) => ({ record, sortKey: Buffer.from(createdKey(record)) }))
      // Byte order, as DynamoDB compares string sort keys.
      .sort((a, b) => Buffer.compare(b.sortKey, a.sortKey))
      .filter((entry) => after === undefined || Buffer.compare(entry.sortKey, after) < 0);
    const page = newestFirst.slice(0, options.limit);
    const last = page.at(-1);
    const items = page.map((entry) => copyRecord(entry.record));
    return newestFirst.length > options.limit && last ? { items, nextCursor: encodeCursor(ownerId, last.sortKey.toString()) } : { items };
  }

  async putExecutionPointer(executionName: string, key: OperationKey, expiresAt: number): Promise<void> {
    checkExpiresAt(expiresAt);
    recordKey(key);
    this.#executionPointers.set(executionPointerKey(executionName), { ownerId: key.ownerId, token: key.token, expiresAt });
  }

  async findExecutionPointer(executionName: string): Promise<(OperationKey & { expiresAt: number }) | undefined> {
    const pointer = this.#executionPointers.get(executionPointerKey(executionName));
    return pointer && { ...pointer };
  }
  async putLogLevel(ownerId: string, level: string, expiresAt: number): Promise<void> {
    checkOwnerId(ownerId);
    checkExpiresAt(expiresAt);
    this.#logLevels.set(ownerId, { level, expiresAt });
  }

  async findLogLevel(ownerId: string): Promise<{ level: string; expiresAt: number } | undefined> {
    const found = this.#logLevels.get(ownerId);
    return found && { ...found };
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

  async discard(key: OperationKey, from: readonly OperationStatus[]): Promise<boolean> {
    const mapKey = recordKey(key);
    const current = this.#records.get(mapKey);
    if (!current || !from.includes(current.status)) return false;
    this.#records.delete(mapKey);
    // The index forgets it after the same lag as any other write.
    const versions = this.#index.get(mapKey) ?? [];
    versions.push({ visibleAt: Date.now() + this.#indexLagMs, record: undefined });
    this.#index.set(mapKey, versions);
    return true;
  }

  #write(key: string, record: OperationRecord): void {
    this.#records.set(key, record);
    const versions = this.#index.get(key) ?? [];
    versions.push({ visibleAt: Date.now() + this.#indexLagMs, record });
    this.#index.set(key, versions);
  }

  /** The newest version of each record the index has caught up with; older ones are dropped. */
  #visibleInIndex(): OperationRecord[] {
    const now = Date.now();
    const visible: OperationRecord[] = [];
    for (const versions of this.#index.values()) {
      const latest = versions.findLastIndex((version) => version.visibleAt <= now);
      if (latest < 0) continue;
      versions.splice(0, latest);
      const { record } = versions[0] as IndexVersion;
      if (record) visible.push(record);
    }
    return visible;
  }

  #checkSize(record: OperationRecord): void {
    if (operationItemBytes(record) > this.#maxRecordBytes) throw new RecordTooLargeError();
  }
}

/**
 * The size DynamoDB counts for a record's item, as the DynamoDB store writes it:
 * attribute names plus values, strings in UTF-8 bytes, `outcome` as its JSON text,
 * the three key attributes included. Numbers count 21 bytes, DynamoDB's maximum,
 * so this is never below what DynamoDB counts.
 */
export function operationItemBytes(record: OperationRecord): number {
  let bytes =
    utf8('pk') +
    utf8(`OP#${record.ownerId}#${record.token}`) +
    utf8('ownerKey') +
    utf8(`OWNER#${record.ownerId}`) +
    utf8('createdKey') +
    utf8(createdKey(record));
  for (const [name, value] of Object.entries(record)) {
    if (value === undefined) continue;
    bytes += utf8(name);
    if (typeof value === 'string') bytes += utf8(value);
    else if (typeof value === 'number') bytes += 21;
    else if (value === null || typeof value === 'boolean') bytes += 1;
    else bytes += utf8(JSON.stringify(value));
  }
  return bytes;
}

/** Copies the way a DynamoDB round trip does: `outcome` goes through JSON, and `undefined` fields disappear. */
function copyRecord(record: OperationRecord): OperationRecord {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined) continue;
    copy[field] = field === 'outcome' ? JSON.parse(JSON.stringify(value)) : value;
  }
  return copy as unknown as OperationRecord;
}

function checkSortKey(record: OperationRecord): void {
  if (utf8(createdKey(record)) > DYNAMODB_LIMITS.maxSortKeyBytes) throw new KeyTooLongError();
}

function checkCreatedAt(createdAt: number): void {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError('createdAt must be a non-negative integer');
}

function recordKey(key: OperationKey): string {
  checkOwnerId(key.ownerId);
  checkPartitionKey(`OP#${key.ownerId}`, key.token);
  return JSON.stringify([key.ownerId, key.token]);
}

function executionPointerKey(executionName: string): string {
  checkPartitionKey('EXEC', executionName);
  return executionName;
}

/** Same sort key as the DynamoDB index: zero-padded creation time, then the token. */
function createdKey(record: OperationRecord): string {
  return `${String(record.createdAt).padStart(15, '0')}#${record.token}`;
}

function encodeCursor(ownerId: string, after: string): string {
  return encodeBase64UrlJson({ ownerId, after });
}

function decodeCursor(ownerId: string, cursor: string): Buffer {
  const parsed = decodeBase64UrlJson(cursor);
  if (!parsed || parsed.ownerId !== ownerId || typeof parsed.after !== 'string') throw new InvalidCursorError();
  return Buffer.from(parsed.after);
}
