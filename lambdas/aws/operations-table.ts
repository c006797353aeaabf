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

/** Environment variables the Lambda functions read; the CDK construct sets them. */
export const ENV = {
  tableName: 'OPERATIONS_TABLE_NAME',
  /** Directory of the bundled tool folders (tool.json + definition.asl.json). */
  toolsDir: 'TOOLS_DIR',
  /** Server-wide bound on keepAlive, seconds. */
  maxKeepAliveSeconds: 'MAX_KEEPALIVE_SECONDS',
  /** "true" lets clients ask for an unlimited keepAlive. */
  allowUnlimitedKeepAlive: 'ALLOW_UNLIMITED_KEEPALIVE',
  /** Bound for blocking calls (synchronous runs, 2025-11-25 tasks/result), seconds; fits the Lambda timeout. */
  maxBlockingSeconds: 'MAX_BLOCKING_SECONDS',
  /** Active (not yet terminal) operations one principal may have at once; default 100. */
  maxActiveOperations: 'ASYNC_MCP_MAX_ACTIVE_OPERATIONS',
  /** "1" turns on handle tools for clients without async support; off when unset. */
  handleTools: 'ASYNC_MCP_HANDLE_TOOLS',
  /** "0" turns off `subscriptions/listen` (task status notifications); on when unset. */
  listen: 'ASYNC_MCP_LISTEN',
  /** The results bucket: tool results too large for a record live there. */
  resultsBucket: 'RESULTS_BUCKET_NAME',
  /** The Secrets Manager secret holding the server's key for state handed to clients (`requestState`). */
  secretArn: 'ASYNC_MCP_SECRET_ARN',
  /** The EventBridge bus status sync puts `Operation Status Changed` events on (name or ARN); none when unset. */
  eventBusName: 'ASYNC_MCP_EVENT_BUS_NAME',
  /** "0" turns off the MCP Events extension (`events/*`); on when unset. */
  events: 'ASYNC_MCP_EVENTS',
  /** How long the per-principal event log keeps an occurrence, hours; default 24. */
  eventsRetentionHours: 'ASYNC_MCP_EVENTS_RETENTION_HOURS',
  /** The longest webhook subscription TTL the server grants, seconds; default 3600, at most 86400. */
  eventsMaxSubscriptionTtlSeconds: 'ASYNC_MCP_EVENTS_MAX_TTL_SECONDS',
  /** The SQS queue webhook delivery jobs go to; without it, subscriptions are refused as unsupported. */
  eventsDeliveryQueueUrl: 'ASYNC_MCP_EVENTS_DELIVERY_QUEUE_URL',
  /** "1" allows loopback http callbacks (local mode); only the local as-deployed runner sets it, never the CDK template. */
  eventsLoopbackCallbacks: 'ASYNC_MCP_EVENTS_LOOPBACK_CALLBACKS',
} as const;
