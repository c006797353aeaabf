/**
 * The app's `events` option in a deployed MCP function, from its environment (environment.ts),
 * over the event log and webhook subscriptions it is given: the MCP function passes ones
 * that load on first use (lambdas/aws/lazy-dynamodb-event-stores.ts), so this module imports
 * no DynamoDB adapter, and a cold start that only polls loads none.
 */
import { lazySqsWebhookDeliveryQueue } from '../../aws/lazy-sqs-webhook-delivery-queue.ts';
import type { EventHandover } from '../../events/event-handover.ts';
import type { EventLog } from '../../events/event-log.ts';
import type { WebhookSubscriptionStore } from '../../events/webhook-subscription.ts';
import { eventsCallbackModeFromEnv, eventsDeliveryQueueUrlFromEnv, eventsFromEnv } from '../../handlers/environment.ts';
import type { EventsAppOptions } from './app-events.ts';

/** The event log and the webhook subscriptions on the operations table. */
export interface DeployedEventStores {
  readonly log: EventLog;
  readonly subscriptions: WebhookSubscriptionStore;
  /** The handover marks on the log's entries. */
  readonly handover?: EventHandover;
}

/**
 * The app's `events` option over `stores`. The SQS client loads on the first enqueue: a
 * poll never enqueues, and importing it was a quarter of a cold start.
 */
export function deployedEventsOptions(stores: DeployedEventStores): EventsAppOptions {
  const queueUrl = eventsDeliveryQueueUrlFromEnv();
  return {
    ...eventsFromEnv(),
    log: stores.log,
    subscriptions: stores.subscriptions,
    ...(stores.handover ? { handover: stores.handover } : {}),
    ...(queueUrl ? { queue: lazySqsWebhookDeliveryQueue(queueUrl), callbackMode: eventsCallbackModeFromEnv() } : {}),
  };
}
