/**
 * Results too large for an operation record (DynamoDB items hold 400 KB, Step Functions
 * state output 256 KB) live in a results store: S3 in AWS, an S3-compatible server
 * locally, memory in unit tests. An object's key names its owner, so a principal can
 * only ever read its own results.
 */
import { createHash } from 'node:crypto';
import { statusMessageFor } from './execution-outcome.ts';
import { mintId } from './fingerprint.ts';
import type { OperationChanges, OperationRecord } from './operation.ts';
import type { ResultShaper } from './ports.ts';

/** A stored result: its bytes and their media type. */
export interface StoredResult {
  body: Uint8Array;
  contentType: string;
}

export interface ResultStore {
  /** Writes (or overwrites) the object at `key`. */
  put(key: string, result: StoredResult): Promise<void>;
  /** The object at `key`, or `undefined` when there is none. */
  get(key: string): Promise<StoredResult | undefined>;
}

/**
 * Outputs whose JSON is longer than this (UTF-8 bytes) are stored as results instead of
 * in the record: an output of exactly this size stays inline. Far below both the record
 * limit and the state output limit, so everything else in a record still fits.
 */
export const DEFAULT_SPILL_THRESHOLD_BYTES = 64 * 1024;

/** The URI scheme and authority of our result resources. */
export const RESULT_URI_PREFIX = 'async-mcp://results/';

/**
 * Result ids: the token (base64url), a dot, random bits (base64url), and, since keys are
 * hashed, a dot and who wrote it (`s` the server, `w` a worker). Ids without the last part
 * were written under the older keys, which embedded them.
 */
const RESULT_ID = /^([A-Za-z0-9_-]{1,1400})\.([A-Za-z0-9_-]{16,64})(?:\.([sw]))?$/;

/**
 * Who wrote a result, which decides how long its object must be kept: the server spills
 * an output at completion (kept the operation's keepAlive), a worker writes one while the
 * execution runs (kept its longest run plus keepAlive).
 */
export type ResultWriter = 'server' | 'worker';

/** The key prefix of each writer's objects; the results bucket's lifecycle rules follow them. */
export const RESULT_KEY_PREFIXES: Readonly<Record<ResultWriter, string>> = { server: 'results/spilled/', worker: 'results/worker/' };

/**
 * The object key of result `resultId` of owner `ownerId`: a fixed-length hash of both under
 * its writer's prefix, so any token (up to 1,000 bytes) fits S3's 1,024-byte keys and only
 * the owner's id leads to it. A result written before keys were hashed keeps its old key.
 */
export function resultKeyFor(ownerId: string, resultId: string): string {
  const writer = RESULT_ID.exec(resultId)?.[3];
  if (writer === undefined) return `results/${ownerId}/${resultId}`;
  const digest = createHash('sha256').update(`result\n${ownerId}\n${resultId}`).digest('base64url');
  return `${RESULT_KEY_PREFIXES[writer === 's' ? 'server' : 'worker']}${digest}`;
}

/** A result id for operation `token`: the token it belongs to (so a read can check the operation lives), `random`, and its writer. */
export function resultIdFor(token: string, random: string, writer: ResultWriter): string {
  return `${Buffer.from(token, 'utf8').toString('base64url')}.${random}.${writer === 'server' ? 's' : 'w'}`;
}

/** The URI of result `resultId`. */
export function resultUriFor(resultId: string): string {
  return `${RESULT_URI_PREFIX}${resultId}`;
}

/** The result id and operation token a result URI names, or `undefined` when it names none of ours. */
export function parseResultUri(uri: string): { resultId: string; token: string } | undefined {
  if (!uri.startsWith(RESULT_URI_PREFIX)) return undefined;
  const resultId = uri.slice(RESULT_URI_PREFIX.length);
  const encoded = RESULT_ID.exec(resultId)?.[1];
  if (encoded === undefined) return undefined;
  return { resultId, token: Buffer.from(encoded, 'base64url').toString('utf8') };
}

/** Where outputs too large for a record go, and from what size. */
export interface ResultSpill {
  store: ResultStore;
  /** @default DEFAULT_SPILL_THRESHOLD_BYTES */
  thresholdBytes?: number;
}

/**
 * An output whose JSON is larger than the spill threshold goes to the results store,
 * and the record keeps only where it is. Without a results store it stays as it is.
 * `force` spills whatever the size (a record that would not fit otherwise).
 */
export async function spillLargeOutput(
  results: ResultSpill | undefined,
  record: OperationRecord,
  changes: OperationChanges,
  force = false,
): Promise<OperationChanges> {
  const outcome = changes.outcome;
  // A synchronous call's record is read by the call alone, which answers the result itself.
  if (!results || outcome?.kind !== 'result' || record.dialect === 'sync') return changes;
  const body = Buffer.from(JSON.stringify(outcome.output), 'utf8');
  if (!force && body.byteLength <= (results.thresholdBytes ?? DEFAULT_SPILL_THRESHOLD_BYTES)) return changes;
  const resultId = resultIdFor(record.token, mintId(), 'server');
  const mimeType = 'application/json';
  await results.store.put(resultKeyFor(record.ownerId, resultId), { body, contentType: mimeType });
  return { ...changes, outcome: { kind: 'stored-result', resultId, mimeType, bytes: body.byteLength } };
}

/**
 * A terminal write's outcome as it will be read: checked and shaped once, now, against the
 * tool as the execution ran it (the record's contract), then spilled when large (or, with
 * `force`, whatever its size). An output that breaks the contract fails the operation. A
 * record without a contract (written by an earlier version) keeps its raw outcome, shaped
 * on read as before.
 */
export async function settleResult(
  results: ResultSpill | undefined,
  shape: ResultShaper | undefined,
  record: OperationRecord,
  changes: OperationChanges,
  force = false,
): Promise<OperationChanges> {
  const outcome = changes.outcome;
  const contract = record.resultContract;
  if (!shape || !contract || outcome?.kind !== 'result') return spillLargeOutput(results, record, changes, force);
  const tool = { ...contract, name: record.tool };
  const checked = shape(outcome, tool);
  if (checked.kind !== 'call-tool-result') return { ...changes, status: 'failed', statusMessage: statusMessageFor('failed', checked), outcome: checked };
  const spilled = await spillLargeOutput(results, record, changes, force);
  return { ...changes, outcome: spilled.outcome?.kind === 'stored-result' ? shape(spilled.outcome, tool) : checked };
}
