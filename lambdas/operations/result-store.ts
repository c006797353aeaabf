/**
 * Results too large for an operation record (DynamoDB items hold 400 KB, Step Functions
 * state output 256 KB) live in a results store: S3 in AWS, an S3-compatible server
 * locally, memory in unit tests. An object's key names its owner, so a principal can
 * only ever read its own results.
 */
import { mintId } from './fingerprint.ts';
import type { OperationChanges, OperationRecord } from './operation.ts';

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

/** Result ids: the token (base64url), a dot, and random bits (base64url). */
const RESULT_ID = /^([A-Za-z0-9_-]{1,1400})\.([A-Za-z0-9_-]{16,64})$/;

/** The object key of result `resultId` of owner `ownerId`. */
export function resultKeyFor(ownerId: string, resultId: string): string {
  return `results/${ownerId}/${resultId}`;
}

/** A result id for operation `token`: the token it belongs to (so a read can check the operation lives), then `random`. */
export function resultIdFor(token: string, random: string): string {
  return `${Buffer.from(token, 'utf8').toString('base64url')}.${random}`;
}

/** The URI of result `resultId`. */
export function resultUriFor(resultId: string): string {
  return `${RESULT_URI_PREFIX}${resultId}`;
}

/** The result id and operation token a result URI names, or `undefined` when it names none of ours. */
export function parseResultUri(uri: string): { resultId: string; token: string } | undefined {
  if (!uri.startsWith(RESULT_URI_PREFIX)) return undefined;
  const resultId = uri.slice(RESULT_URI_PREFIX.length);
  const match = RESULT_ID.exec(resultId);
  if (!match) return undefined;
  return { resultId, token: Buffer.from(match[1]!, 'base64url').toString('utf8') };
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
 */
export async function spillLargeOutput(results: ResultSpill | undefined, record: OperationRecord, changes: OperationChanges): Promise<OperationChanges> {
  const outcome = changes.outcome;
  if (!results || outcome?.kind !== 'result') return changes;
  const body = Buffer.from(JSON.stringify(outcome.output), 'utf8');
  if (body.byteLength <= (results.thresholdBytes ?? DEFAULT_SPILL_THRESHOLD_BYTES)) return changes;
  const resultId = resultIdFor(record.token, mintId());
  const mimeType = 'application/json';
  await results.store.put(resultKeyFor(record.ownerId, resultId), { body, contentType: mimeType });
  return { ...changes, outcome: { kind: 'stored-result', resultId, mimeType, bytes: body.byteLength } };
}
