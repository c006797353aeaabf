/**
 * A RequestStateStore in a DynamoDB table with a string partition key `pk` and a string sort
 * key `sk`: one item per handle under one partition per namespace, so `list` is one Query.
 * Entries expire through the table's TTL attribute `expiresAt` when `ttlSeconds` is set.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { StoredCall } from '../call-handle.ts';
import { assertHandleId, newestFirst, type RequestStateStore } from './request-state-store.ts';

export interface DynamoDbRequestStateStoreOptions {
  client: DynamoDBClient;
  tableName: string;
  /** Separates users or applications sharing a table. @default 'default' */
  namespace?: string;
  /** Seconds an entry lives after its last write, through the table's TTL on `expiresAt`. @default no expiry */
  ttlSeconds?: number;
}

export class DynamoDbRequestStateStore implements RequestStateStore {
  private readonly client: DynamoDBClient;
  private readonly tableName: string;
  private readonly pk: string;
  private readonly ttlSeconds: number | undefined;

  constructor(options: DynamoDbRequestStateStoreOptions) {
    this.client = options.client;
    this.tableName = options.tableName;
    this.pk = `ASYNC_MCP_CALLS#${options.namespace ?? 'default'}`;
    this.ttlSeconds = options.ttlSeconds;
  }

  async put(entry: StoredCall): Promise<void> {
    assertHandleId(entry.handle.id);
    const item: Record<string, AttributeValue> = {
      pk: { S: this.pk },
      sk: { S: entry.handle.id },
      entry: { S: JSON.stringify(entry) },
      ...(this.ttlSeconds === undefined ? {} : { expiresAt: { N: String(Math.floor(Date.now() / 1000) + this.ttlSeconds) } }),
    };
    await this.client.send(new PutItemCommand({ TableName: this.tableName, Item: item }));
  }

  async get(id: string): Promise<StoredCall | undefined> {
    assertHandleId(id);
    const answer = await this.client.send(new GetItemCommand({ TableName: this.tableName, Key: this.key(id), ConsistentRead: true }));
    return this.entryOf(answer.Item);
  }

  async list(): Promise<StoredCall[]> {
    const entries: StoredCall[] = [];
    let startKey: Record<string, AttributeValue> | undefined;
    do {
      const page = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ':pk': { S: this.pk } },
          ConsistentRead: true,
          ...(startKey ? { ExclusiveStartKey: startKey } : {}),
        }),
      );
      for (const item of page.Items ?? []) {
        const entry = this.entryOf(item);
        if (entry) entries.push(entry);
      }
      startKey = page.LastEvaluatedKey;
    } while (startKey);
    return newestFirst(entries);
  }

  async delete(id: string): Promise<void> {
    assertHandleId(id);
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(id) }));
  }

  private key(id: string): Record<string, AttributeValue> {
    return { pk: { S: this.pk }, sk: { S: id } };
  }

  private entryOf(item: Record<string, AttributeValue> | undefined): StoredCall | undefined {
    const text = item?.entry?.S;
    if (text === undefined) return undefined;
    // TTL deletes late: an expired entry is gone as far as readers are concerned.
    const expiresAt = item?.expiresAt?.N;
    if (expiresAt !== undefined && Number(expiresAt) < Date.now() / 1000) return undefined;
    return JSON.parse(text) as StoredCall;
  }
}
