/**
 * The Events extension's DynamoDB event log, its handover marks and webhook subscriptions, loaded on first use
 * with the table's client (lazy-dynamodb-client.ts): a poll reads neither, so the MCP
 * function's cold start imports neither them nor the DynamoDB client.
 */
import type { EventHandover } from '../events/event-handover.ts';
import { INDEX_LAG_MS, type EventLog } from '../events/event-log.ts';
import type { WebhookSubscriptionStore } from '../events/webhook-subscription.ts';
import type { DynamoDbWebhookSubscriptions } from './dynamodb-webhook-subscriptions.ts';
import type { DynamoDbClientHandle } from './lazy-dynamodb-client.ts';

export interface LazyDynamoDbTable {
  readonly client: DynamoDbClientHandle;
  readonly tableName: string;
}

export function lazyDynamoDbEventLog({ client, tableName }: LazyDynamoDbTable): EventLog {
  let loaded: Promise<EventLog> | undefined;
  const log = () =>
    (loaded ??= Promise.all([client.get(), import('./dynamodb-event-log.ts')]).then(
      ([built, { DynamoDbEventLog }]) => new DynamoDbEventLog({ client: built, tableName }),
    ));
  return {
    indexLagMs: INDEX_LAG_MS,
    append: async (entry) => (await log()).append(entry),
    read: async (ownerId, stream, range) => (await log()).read(ownerId, stream, range),
    get: async (ownerId, eventId) => (await log()).get(ownerId, eventId),
  };
}

export function lazyDynamoDbWebhookSubscriptions({ client, tableName }: LazyDynamoDbTable): WebhookSubscriptionStore {
  let loaded: Promise<DynamoDbWebhookSubscriptions> | undefined;
  const store = () =>
    (loaded ??= Promise.all([client.get(), import('./dynamodb-webhook-subscriptions.ts')]).then(
      ([built, { DynamoDbWebhookSubscriptions }]) => new DynamoDbWebhookSubscriptions({ client: built, tableName }),
    ));
  return {
    get: async (ownerId, id) => (await store()).get(ownerId, id),
    listByOwner: async (ownerId) => (await store()).listByOwner(ownerId),
    save: async (subscription, expectedVersion) => (await store()).save(subscription, expectedVersion),
    delete: async (ownerId, id, expectedVersion) => (await store()).delete(ownerId, id, expectedVersion),
    getSlots: async (ownerId) => (await store()).getSlots(ownerId),
    saveSlots: async (ownerId, slots, expectedVersion) => (await store()).saveSlots(ownerId, slots, expectedVersion),
  };
}

export function lazyDynamoDbEventHandover({ client, tableName }: LazyDynamoDbTable): EventHandover {
  let loaded: Promise<EventHandover> | undefined;
  const handover = () =>
    (loaded ??= Promise.all([client.get(), import('./dynamodb-event-handover.ts')]).then(
      ([built, { DynamoDbEventHandover }]) => new DynamoDbEventHandover({ client: built, tableName }),
    ));
  return {
    handedOver: async (ownerId, eventId) => (await handover()).handedOver(ownerId, eventId),
    markHandedOver: async (ownerId, eventId, at) => (await handover()).markHandedOver(ownerId, eventId, at),
  };
}
