/**
 * An in-memory RecordStore for unit tests of the core. It keeps the DynamoDB
 * adapter's semantics (conditional create and transition, newest-first owner
 * listing with an opaque cursor, request aliases, active-operation slots, key and
 * item size limits, optionally a lagging owner index), and the shared contract
 * suite holds both to the same behaviour. Imitating DynamoDB, it takes DynamoDB's
 * numbers from the adapter's dependency-free limits module, the one place they live.
 */
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from './operation.ts';
import { DYNAMODB_LIMITS, KeyTooLongError } from '../aws/dynamodb-limits.ts';
import {
  InvalidCursorError,
  MAX_REQUEST_ALIASES_PER_OPERATION,
  RecordTooLargeError,
  type CreateResult,
  type Page,
  type RecordStore,
  type RequestAlias,
  type SlotAlias,
  type SlotClaim,
} from './ports.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../shared/json-values.ts';

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
const CLEARABLE_FIELDS: readonly ChangeField[] = ['statusMessage', 'executionArn', 'completedAt', 'expiresAt', 'outcome', 'pendingInputs', 'usedInputKeys', 'closedInputs', 'reports'];
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
  /** Request aliases by owner (kept with the owner's slots, as the DynamoDB store keeps them on its slot item). */
  readonly #aliases = new Map<string, Map<string, RequestAlias>>();
  readonly #executionPointers = new Map<string, OperationKey & { expiresAt: number }>();
  readonly #slots = new Map<string, Set<string>>();
  readonly #logLevels = new Map<string, { level: string; expiresAt: number }>();
  readonly #maxRecordBytes: number;
  readonly #indexLagMs: number;

  constructor(options: InMemoryRecordStoreOptions = {}) {
    this.#maxRecordBytes = options.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.#indexLagMs = options.indexLagMs ?? 0;
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
    return newestFirst.length > options.limit && last
      ? { items, nextCursor: encodeCursor(ownerId, last.sortKey.toString()) }
      : { items };
  }

  async putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    checkExpiresAt(alias.expiresAt);
    checkOwnerId(ownerId);
    // Only while the token holds its slot; last writer wins (JSON-RPC ids repeat across connections).
    if (!this.#slots.get(slotKey(ownerId))?.has(alias.token)) return;
    this.#setAlias(ownerId, requestId, alias);
  }

  async deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    this.#aliases.get(slotKey(ownerId))?.delete(requestId);
  }

  async findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    const alias = this.#aliases.get(slotKey(ownerId))?.get(requestId);
    return alias && { ...alias };
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


  async claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    checkLimit(limit);
    if (alias) checkExpiresAt(alias.expiresAt);
    const key = slotKey(ownerId);
    const tokens = this.#slots.get(key) ?? new Set<string>();
    const held = tokens.has(token);
    if (!held && tokens.size >= limit) return 'refused';
    if (!held) {
      tokens.add(token);
      this.#checkSlotsSize(ownerId, tokens, token);
      this.#slots.set(key, tokens);
    }
    if (alias) this.#setAlias(ownerId, alias.requestId, { token, expiresAt: alias.expiresAt });
    return held ? 'already-held' : 'claimed';
  }

  async releaseActiveSlot(ownerId: string, token: string, _requestId?: string): Promise<void> {
    const key = slotKey(ownerId);
    const tokens = this.#slots.get(key);
    tokens?.delete(token);
    const aliases = this.#aliases.get(key);
    // Every alias still naming the token goes with its slot (the request id's among them).
    for (const [id, alias] of aliases ?? []) if (alias.token === token) aliases?.delete(id);
    if (tokens?.size === 0) {
      // The slot item goes, and the aliases kept on it with it.
      this.#slots.delete(key);
      this.#aliases.delete(key);
    }
  }

  /** Sets an alias, newest last; the token keeps its newest MAX_REQUEST_ALIASES_PER_OPERATION, as the DynamoDB store does. */
  #setAlias(ownerId: string, requestId: string, alias: RequestAlias): void {
    const aliases = this.#aliasesOf(ownerId);
    aliases.delete(requestId);
    aliases.set(requestId, { token: alias.token, expiresAt: alias.expiresAt });
    const own = [...aliases].filter(([, kept]) => kept.token === alias.token).map(([id]) => id);
    for (const id of own.slice(0, Math.max(0, own.length - MAX_REQUEST_ALIASES_PER_OPERATION))) aliases.delete(id);
  }

  #aliasesOf(ownerId: string): Map<string, RequestAlias> {
    checkOwnerId(ownerId);
    const key = slotKey(ownerId);
    let aliases = this.#aliases.get(key);
    if (!aliases) {
      aliases = new Map();
      this.#aliases.set(key, aliases);
    }
    return aliases;
  }

  async listActiveSlots(ownerId: string): Promise<string[]> {
    return [...(this.#slots.get(slotKey(ownerId)) ?? [])].sort();
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

  #checkSlotsSize(ownerId: string, tokens: Set<string>, added: string): void {
    const bytes = utf8(`ACTIVE#${ownerId}`) + utf8('pk') + utf8('tokens') + [...tokens].reduce((sum, t) => sum + utf8(t), 0);
    if (bytes > this.#maxRecordBytes) {
      tokens.delete(added);
      throw new RecordTooLargeError();
    }
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
    utf8('pk') + utf8(`OP#${record.ownerId}#${record.token}`) +
    utf8('ownerKey') + utf8(`OWNER#${record.ownerId}`) +
    utf8('createdKey') + utf8(createdKey(record));
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

function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

// The DynamoDB keys join owner and token with '#', so an owner id containing one would be ambiguous.
function checkOwnerId(ownerId: string): void {
  if (ownerId.includes('#')) throw new RangeError('An owner id must not contain "#"');
}

/** Refuses what DynamoDB refuses: a partition key `<prefix>#<id>` over 2,048 UTF-8 bytes. */
function checkPartitionKey(prefix: string, id: string): void {
  if (utf8(prefix) + 1 + utf8(id) > DYNAMODB_LIMITS.maxPartitionKeyBytes) throw new KeyTooLongError();
}

function checkSortKey(record: OperationRecord): void {
  if (utf8(createdKey(record)) > DYNAMODB_LIMITS.maxSortKeyBytes) throw new KeyTooLongError();
}

function checkCreatedAt(createdAt: number): void {
  if (!Number.isSafeInteger(createdAt) || createdAt < 0) throw new RangeError('createdAt must be a non-negative integer');
}

function checkExpiresAt(expiresAt: number): void {
  if (!Number.isFinite(expiresAt)) throw new RangeError('expiresAt must be a finite number');
}

function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
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

function slotKey(ownerId: string): string {
  checkOwnerId(ownerId);
  if (utf8(`ACTIVE#${ownerId}`) > DYNAMODB_LIMITS.maxPartitionKeyBytes) throw new KeyTooLongError();
  return ownerId;
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
