/**
 * The MCP function's DynamoDB client, built on first need: a cold start's initialize,
 * tools/list and poll need none of it (a poll's GetItem goes by the Lambda environment's
 * wire, lambda-environment-wire.ts), and loading and building it was about a third of the
 * bundle's module init. A start, a write, an events query or a fallback loads it.
 */
import type { DynamoDBClient, DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/** A DynamoDB client, loaded by the first `get`. */
export interface DynamoDbClientHandle {
  get(): Promise<DynamoDBClient>;
  /** The client if it is loaded already, else `undefined`: nothing is loaded by asking. */
  built(): DynamoDBClient | undefined;
}

export function lazyDynamoDbClient(config: DynamoDBClientConfig): DynamoDbClientHandle {
  let loading: Promise<DynamoDBClient> | undefined;
  let client: DynamoDBClient | undefined;
  return {
    get: () =>
      (loading ??= import('@aws-sdk/client-dynamodb').then(({ DynamoDBClient }) => {
        client = new DynamoDBClient(config);
        return client;
      })),
    built: () => client,
  };
}
