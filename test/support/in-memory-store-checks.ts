/**
 * The argument checks both halves of the in-memory store make, refusing what the DynamoDB
 * store refuses: an owner id holding the keys' separator, a partition key over DynamoDB's
 * size, a non-finite expiry, a limit that is not a positive count.
 */
import { DYNAMODB_LIMITS, KeyTooLongError } from '../../lambdas/aws/dynamodb-limits.ts';

/** A string's size as DynamoDB counts it. */
export function utf8(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

/** The DynamoDB keys join owner and token with '#', so an owner id containing one would be ambiguous. */
export function checkOwnerId(ownerId: string): void {
  if (ownerId.includes('#')) throw new RangeError('An owner id must not contain "#"');
}

/** Refuses what DynamoDB refuses: a partition key `<prefix>#<id>` over 2,048 UTF-8 bytes. */
export function checkPartitionKey(prefix: string, id: string): void {
  if (utf8(prefix) + 1 + utf8(id) > DYNAMODB_LIMITS.maxPartitionKeyBytes) throw new KeyTooLongError();
}

export function checkExpiresAt(expiresAt: number): void {
  if (!Number.isFinite(expiresAt)) throw new RangeError('expiresAt must be a finite number');
}

export function checkLimit(limit: number): void {
  if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
}
