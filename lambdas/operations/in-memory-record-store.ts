/**
 * An in-memory RecordStore for unit tests of the core. It keeps the DynamoDB
 * adapter's semantics (conditional create and transition, newest-first owner
 * listing with an opaque cursor, request aliases, the item size limit), and the
 * shared contract suite holds both to the same behaviour.
 */
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from './operation.ts';
import { InvalidCursorError, RecordTooLargeError, type CreateResult, type Page, type RecordStore } from './ports.ts';

/** DynamoDB's item size limit, which this store approximates. */
export const DEFAULT_MAX_RECORD_BYTES = 400 * 1024;

export interface InMemoryRecordStoreOptions {
  /**
   * Size limit, measured as the UTF-8 length of the record's JSON.
   * @default DEFAULT_MAX_RECORD_BYTES
   */
  readonly maxRecordBytes?: number;
}

type ChangeField = keyof OperationChanges;

// Required fields are never cleared, so `undefined` there means "leave as is".
const CLEARABLE_FIELDS: readonly ChangeField[] = ['statusMessage', 'executionArn', 'completedAt', 'expiresAt', 'outcome', 'dialectState'];
const CHANGE_FIELDS: readonly ChangeField[] = ['status', 'updatedAt', ...CLEARABLE_FIELDS];

/** In-memory `RecordStore`; stores and returns deep copies, so callers cannot mutate stored state. */
export class InMemoryRecordStore implements RecordStore {
  readonly #records = new Map<string, OperationRecord>();
  readonly #aliases = new Map<string, string>();
  readonly #maxRecordBytes: number;

  constructor(options: InMemoryRecordStoreOptions = {}) {
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
  }

  async create(record: OperationRecord): Promise<CreateResult> {
    const key = recordKey(record);
    checkCreatedAt(record.createdAt);
    const existing = this.#records.get(key);
    if (existing) return { created: false, existing: copyRecord(existing) };
    const stored = copyRecord(record);
    this.#checkSize(stored);
    this.#records.set(key, stored);
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
  ): Promise<OperationRecord | undefined> {
    const mapKey = recordKey(key);
    const current = this.#records.get(mapKey);
    if (!current || !from.includes(current.status)) return undefined;
    const next: Record<string, unknown> = { ...current };
    for (const field of CHANGE_FIELDS) {
      if (!Object.hasOwn(changes, field)) continue;
      const value = changes[field];
      if (value !== undefined) next[field] = value;
      else if (CLEARABLE_FIELDS.includes(field)) delete next[field];
    }
    const updated = copyRecord(next as unknown as OperationRecord);
    this.#checkSize(updated);
    this.#records.set(mapKey, updated);
    return copyRecord(updated);
  }

  async listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    checkOwnerId(ownerId);
    checkLimit(options.limit);
    const after = options.cursor === undefined ? undefined : decodeCursor(ownerId, options.cursor);
    const newestFirst = [...this.#records.values()]
      .filter((record) => record.ownerId === ownerId)
      .map((record) => ({ record, sortKey: Buffer.from(createdKey(record)) }))
      // Byte order, as DynamoDB compares string sort keys.
      .sort((a, b) => Buffer.compare(b.sortKey, a.sortKey))
      .filter((entry) => after === undefined || Buffer.compare(entry.sortKey, after) < 0);
    const page = newestFirst.slice(0, options.limit);
    const last = page.at(-1);
    const items = page.map((entry) => copyRecord(entry.record));
    return newestFirst.length > options.limit && last
      ? { items, nextCursor: encodeCursor(ownerId, last.sortKey.toString()) }
      : { items };
  }

  async putRequestAlias(ownerId: string, requestId: string, token: string, _expiresAt: number): Promise<void> {
    // Last writer wins: JSON-RPC ids repeat across connections, and the newest request is the one a cancel names.
    this.#aliases.set(aliasKey(ownerId, requestId), token);
  }

  async findTokenByRequestId(ownerId: string, requestId: string): Promise<string | undefined> {
    return this.#aliases.get(aliasKey(ownerId, requestId));
  }

  #checkSize(record: OperationRecord): void {
    if (Buffer.byteLength(JSON.stringify(record)) > this.#maxRecordBytes) throw new RecordTooLargeError();
  }
}

/**
 * Copies the way a DynamoDB round trip does: `outcome` and `dialectState` go
 * through JSON, and top-level `undefined` fields disappear.
 */
function copyRecord(record: OperationRecord): OperationRecord {
  const copy: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(record)) {
    if (value === undefined) continue;
    copy[field] = field === 'outcome' || field === 'dialectState' ? JSON.parse(JSON.stringify(value)) : value;
  }
  return copy as unknown as OperationRecord;
}

// The DynamoDB keys join owner and token with '#', so an owner id containing one would be ambiguous.
function checkOwnerId(ownerId: string): void {
  if (ownerId.includes('#')) throw new RangeError('An owner id must not contain "#"');
}

function checkCreatedAt(createdAt: number): void {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError('createdAt must be a non-negative integer');
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
}

function recordKey(key: OperationKey): string {
  checkOwnerId(key.ownerId);
  return JSON.stringify([key.ownerId, key.token]);
}

function aliasKey(ownerId: string, requestId: string): string {
  checkOwnerId(ownerId);
  return JSON.stringify([ownerId, requestId]);
}

/** Same sort key as the DynamoDB index: zero-padded creation time, then the token. */
function createdKey(record: OperationRecord): string {
  return `${String(record.createdAt).padStart(15, '0')}#${record.token}`;
}

function encodeCursor(ownerId: string, after: string): string {
  return Buffer.from(JSON.stringify({ ownerId, after })).toString('base64url');
}

function decodeCursor(ownerId: string, cursor: string): Buffer {
  if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch (error) {
    throw new InvalidCursorError({ cause: error });
  }
  if (typeof parsed !== 'object' || parsed === null) throw new InvalidCursorError();
  const { ownerId: cursorOwner, after } = parsed as Record<string, unknown>;
  if (cursorOwner !== ownerId || typeof after !== 'string') throw new InvalidCursorError();
  return Buffer.from(after);
}
