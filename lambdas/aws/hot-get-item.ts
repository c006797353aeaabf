/**
 * The poll's read: one consistent `GetItem` of an operation item, sent over the hot wire
 * (hot-call.ts: the SDK client's own parts built once, not its per-call middleware, about a
 * third of a poll's CPU). In the MCP function, whose cold start does not load the DynamoDB
 * client for a poll, the wire is built from the Lambda environment instead
 * (lambda-environment-wire.ts), and the SDK path loads the client when it first needs it.
 *
 * Any anomaly (a status other than 200, a network error, a body that does not parse, an item
 * with attribute types the hot path does not decode, a key over DynamoDB's limit) sends the
 * same request again through the unmodified SDK path, `client.send(new GetItemCommand(...))`,
 * and a throttle or a 5xx is that path's first attempt: the error a caller sees, its retries
 * and backoff stay exactly the SDK's (hot-call.ts says how).
 */
import type { AttributeValue, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { HotCall, type HotOperation, type HotWireSource } from './hot-call.ts';
import { DYNAMODB_LIMITS } from './dynamodb-limits.ts';
import type { DynamoDbClientHandle } from './lazy-dynamodb-client.ts';

export { MAX_MISSES_IN_A_ROW, type HotRequest, type HotResponse, type HotWire, type HotWireSource } from './hot-call.ts';

/** What the store sends for its operation reads. */
export interface GetItemRequest {
  readonly TableName: string;
  readonly Key: Record<string, AttributeValue>;
  readonly ConsistentRead: true;
}

type Item = Record<string, AttributeValue>;

const GET_ITEM: HotOperation<GetItemRequest, { Item?: Item }> = {
  name: 'GetItem',
  target: 'DynamoDB_20120810.GetItem',
  write: false,
  read: (body) => {
    if (body === undefined) return undefined;
    const item = (body as { Item?: unknown }).Item;
    if (item === undefined) return {};
    return isPlainItem(item) ? { Item: item } : undefined;
  },
  // Imported here, not at the top: the MCP function's cold start does not load the SDK for a poll.
  command: async (input) => new (await import('@aws-sdk/client-dynamodb')).GetItemCommand(input),
};

/**
 * `send(request)` answers a consistent GetItem's `Item`, by the hot path or, on any anomaly, the SDK's.
 * Built over a client, the wire is the client's own parts (its config); built over a handle
 * of a client not yet loaded (lazy-dynamodb-client.ts), the wire is the one given (the
 * Lambda environment's, lambda-environment-wire.ts), or else the client's once loaded.
 */
export class HotGetItem {
  readonly #calls: HotCall<DynamoDBClient>;

  /**
   * `onWireDropped` is told, with why, when the wire cannot be built or is given up (see
   * MAX_MISSES_IN_A_ROW): every read then takes the SDK path, and the operator should hear of it.
   */
  constructor(client: DynamoDBClient | DynamoDbClientHandle, wire?: HotWireSource, options: { onWireDropped?: (reason: string) => void } = {}) {
    this.#calls = new HotCall(client, 'dynamodb', wire, { ...options, noun: 'reads' });
  }

  send(request: GetItemRequest): Promise<{ Item?: Item }> {
    return this.#calls.send(GET_ITEM, request, { hot: keyFits(request.Key) });
  }
}

/** Only the attribute types the operation item holds as strings pass unchanged (binary ones the SDK decodes). */
export function isPlainItem(item: unknown): item is Item {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return false;
  for (const value of Object.values(item)) if (!isPlainValue(value)) return false;
  return true;
}

function isPlainValue(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const keys = Object.keys(value);
  if (keys.length !== 1) return false;
  const [type] = keys;
  const inner = (value as Record<string, unknown>)[type as string];
  switch (type) {
    case 'S':
    case 'N':
      return typeof inner === 'string';
    case 'BOOL':
    case 'NULL':
      return typeof inner === 'boolean';
    case 'SS':
    case 'NS':
      return Array.isArray(inner) && inner.every((entry) => typeof entry === 'string');
    case 'L':
      return Array.isArray(inner) && inner.every(isPlainValue);
    case 'M':
      return isPlainItem(inner);
    default:
      return false;
  }
}

/** A key over DynamoDB's limit goes to the SDK path, which refuses it as AWS does. */
function keyFits(key: Item): boolean {
  for (const value of Object.values(key)) {
    if (typeof value.S === 'string' && Buffer.byteLength(value.S) > DYNAMODB_LIMITS.maxPartitionKeyBytes) return false;
  }
  return true;
}
