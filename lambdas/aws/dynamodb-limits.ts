/**
 * DynamoDB's size limits, all in UTF-8 bytes, and the error for a key over them. The module
 * imports nothing, so the in-memory store, which imitates this adapter for the contract suite,
 * holds itself to the same numbers without reaching the SDK.
 */

/** What DynamoDB refuses past these sizes; dynalite counts UTF-16 code units, so the store checks them itself. */
export const DYNAMODB_LIMITS = {
  /** A partition key (`pk`, and the owner index's `ownerKey`). */
  maxPartitionKeyBytes: 2048,
  /** A sort key (the owner index's `createdKey`). */
  maxSortKeyBytes: 1024,
  /** An item: attribute names plus values. */
  maxItemBytes: 400 * 1024,
} as const;

/** A key longer than DynamoDB accepts (partition key 2,048 bytes, sort key 1,024); nothing was read or written. */
export class KeyTooLongError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('A key exceeds the size DynamoDB accepts', options);
    this.name = 'KeyTooLongError';
  }
}
