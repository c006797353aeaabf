/**
 * Webhook subscriptions over the operations table: one item per subscription
 * (`SUB#<owner>#<id>`, with `expiresAt` a day past its grant so DynamoDB's TTL collects the
 * abandoned ones; reads check the grant itself), listed per owner through the `byOwner` index
 * (`SUBS#<owner>`). The subscription is kept as JSON text beside its version, and every write
 * is conditional on the version read.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { OPERATIONS_TABLE } from './operations-table.ts';
import { checkOwner, EventStoreError, sendOrThrow, writeIfCondition } from './dynamodb-event-items.ts';
import type { SubscriptionSlots, WebhookSubscription, WebhookSubscriptionStore } from '../events/webhook-subscription.ts';

type Item = Record<string, AttributeValue>;

const PK = OPERATIONS_TABLE.partitionKey;
const OWNER_KEY = OPERATIONS_TABLE.ownerIndex.partitionKey;
const SORT_KEY = OPERATIONS_TABLE.ownerIndex.sortKey;
const EXPIRES_AT = OPERATIONS_TABLE.ttlAttribute;

/** Named conditions: the item is absent, or still at the version that was read. */
const SUBSCRIPTION_IS_NEW = 'attribute_not_exists(#pk)';
const VERSION_IS = '#version = :expected';

/** How long past its grant an abandoned subscription stays before DynamoDB's TTL may delete it. */
const TTL_MARGIN_SECONDS = 86_400;
/**
 * How many pages one owner's listing follows at most. Expired subscriptions stay stored a day past
 * their grant, so an owner that subscribes per operation has far more stored than the per-principal
 * cap: a page is up to 1 MB (thousands of subscriptions), and this bound only stops a runaway loop.
 */
const MAX_LISTED_PAGES = 100;

export class DynamoDbWebhookSubscriptions implements WebhookSubscriptionStore {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: { readonly client: DynamoDBClient; readonly tableName: string }) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async get(ownerId: string, id: string): Promise<WebhookSubscription | undefined> {
    checkOwner(ownerId);
    const output = await sendOrThrow('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: subscriptionPk(ownerId, id) } }, ConsistentRead: true })),
    );
    return output.Item && fromItem(output.Item);
  }

  async listByOwner(ownerId: string): Promise<WebhookSubscription[]> {
    checkOwner(ownerId);
    const listed: WebhookSubscription[] = [];
    let startKey: Item | undefined;
    // Every page: a live subscription may sort after any number of expired ones.
    for (let page = 0; page < MAX_LISTED_PAGES; page++) {
      const output = await sendOrThrow('Query', () =>
        this.#client.send(
          new QueryCommand({
            TableName: this.#tableName,
            IndexName: OPERATIONS_TABLE.ownerIndex.name,
            KeyConditionExpression: '#owner = :owner',
            ExpressionAttributeNames: { '#owner': OWNER_KEY },
            ExpressionAttributeValues: { ':owner': { S: ownerKey(ownerId) } },
            ...(startKey ? { ExclusiveStartKey: startKey } : {}),
          }),
        ),
      );
      listed.push(...(output.Items ?? []).map(fromItem));
      startKey = output.LastEvaluatedKey;
      if (!startKey) return listed;
    }
    throw new EventStoreError(`Query: the subscriptions of one owner span more than ${MAX_LISTED_PAGES} pages`);
  }

  async save(subscription: WebhookSubscription, expectedVersion: number | undefined): Promise<boolean> {
    checkOwner(subscription.ownerId);
    return writeIfCondition('PutItem', () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: toItem(subscription),
          ConditionExpression: expectedVersion === undefined ? SUBSCRIPTION_IS_NEW : VERSION_IS,
          ExpressionAttributeNames: expectedVersion === undefined ? { '#pk': PK } : { '#version': 'version' },
          ...(expectedVersion === undefined ? {} : { ExpressionAttributeValues: { ':expected': { N: String(expectedVersion) } } }),
        }),
      ),
    );
  }

  async delete(ownerId: string, id: string, expectedVersion: number): Promise<boolean> {
    checkOwner(ownerId);
    return writeIfCondition('DeleteItem', () =>
      this.#client.send(
        new DeleteItemCommand({
          TableName: this.#tableName,
          Key: { [PK]: { S: subscriptionPk(ownerId, id) } },
          ConditionExpression: VERSION_IS,
          ExpressionAttributeNames: { '#version': 'version' },
          ExpressionAttributeValues: { ':expected': { N: String(expectedVersion) } },
        }),
      ),
    );
  }

  /** The slots item (`SUB#<owner>#slots`) has no index keys, so it never shows in `listByOwner`. */
  async getSlots(ownerId: string): Promise<SubscriptionSlots> {
    checkOwner(ownerId);
    const output = await sendOrThrow('GetItem', () =>
      this.#client.send(new GetItemCommand({ TableName: this.#tableName, Key: { [PK]: { S: slotsPk(ownerId) } }, ConsistentRead: true })),
    );
    const text = output.Item?.slots?.S;
    return text === undefined
      ? { held: {}, version: 0 }
      : { held: JSON.parse(text) as SubscriptionSlots['held'], version: Number(output.Item?.version?.N ?? 0) };
  }

  async saveSlots(ownerId: string, slots: SubscriptionSlots, expectedVersion: number): Promise<boolean> {
    checkOwner(ownerId);
    const item: Item = { [PK]: { S: slotsPk(ownerId) }, version: { N: String(slots.version) }, slots: { S: JSON.stringify(slots.held) } };
    return writeIfCondition('PutItem', () =>
      this.#client.send(
        new PutItemCommand({
          TableName: this.#tableName,
          Item: item,
          ConditionExpression: expectedVersion === 0 ? SUBSCRIPTION_IS_NEW : VERSION_IS,
          ExpressionAttributeNames: expectedVersion === 0 ? { '#pk': PK } : { '#version': 'version' },
          ...(expectedVersion === 0 ? {} : { ExpressionAttributeValues: { ':expected': { N: String(expectedVersion) } } }),
        }),
      ),
    );
  }
}

/** Subscription ids start `sub_`, so this key is never a subscription's. */
function slotsPk(ownerId: string): string {
  return `SUB#${ownerId}#slots`;
}

function subscriptionPk(ownerId: string, id: string): string {
  return `SUB#${ownerId}#${id}`;
}

function ownerKey(ownerId: string): string {
  return `SUBS#${ownerId}`;
}

function toItem(subscription: WebhookSubscription): Item {
  return {
    [PK]: { S: subscriptionPk(subscription.ownerId, subscription.id) },
    [OWNER_KEY]: { S: ownerKey(subscription.ownerId) },
    [SORT_KEY]: { S: subscription.id },
    version: { N: String(subscription.version) },
    subscription: { S: JSON.stringify(subscription) },
    ...(subscription.refreshBefore === null ? {} : { [EXPIRES_AT]: { N: String(Math.ceil(subscription.refreshBefore / 1000) + TTL_MARGIN_SECONDS) } }),
  };
}

function fromItem(item: Item): WebhookSubscription {
  const text = item.subscription?.S;
  if (text === undefined) throw new EventStoreError('Malformed subscription item: subscription is missing');
  return JSON.parse(text) as WebhookSubscription;
}
