/**
 * The operations table's shape, shared by the DynamoDB record store, the local
 * stack (which creates it in dynalite) and the CDK construct (which deploys it).
 */
export const OPERATIONS_TABLE = {
  /**
   * Partition key: `OP#<ownerId>#<token>` for operations, `ACTIVE#<ownerId>` for the owner's
   * active-operation slots (with the request aliases of those operations).
   */
  partitionKey: 'pk',
  /** DynamoDB's TTL attribute, epoch seconds. TTL deletes late, so reads enforce expiry too. */
  ttlAttribute: 'expiresAt',
  /** Owner + creation time index serving task listings (never a scan). */
  ownerIndex: {
    name: 'byOwner',
    partitionKey: 'ownerKey',
    /** Zero-padded creation time then token, so the sort is chronological and unique. */
    sortKey: 'createdKey',
  },
} as const;
