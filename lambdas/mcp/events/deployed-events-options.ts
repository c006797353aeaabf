/**
 * The app's `events` option in a deployed MCP function, from its environment (environment.ts),
 * over the stores it is given: the handlers build the AWS adapters (the MCP function ones that
 * load on first use, lambdas/aws/lazy-dynamodb-event-stores.ts and lazy-sqs-webhook-delivery-queue.ts),
 * so the edge reaches AWS only through these ports, and a cold start that only polls loads none.
 */
import type { EventHandover } from '../../events/event-handover.ts';
import type { EventLog } from '../../events/event-log.ts';
import type { WebhookDeliveryQueue } from '../../events/webhook-delivery-job.ts';
import type { WebhookSubscriptionStore } from '../../events/webhook-subscription.ts';
import { eventsCallbackModeFromEnv, eventsFromEnv } from '../../handlers/environment.ts';
import type { EventsAppOptions } from './app-events.ts';

/** The event log, its handover marks and the webhook subscriptions on the operations table, and the delivery queue. */
export interface DeployedEventStores {
  readonly log: EventLog;
  readonly subscriptions: WebhookSubscriptionStore;
  /** The handover marks on the log's entries: a shared log always has its shared marks. */
  readonly handover: EventHandover;
  /** The stack's delivery queue; none where the stack names none, and webhooks are then not offered. */
  readonly queue?: WebhookDeliveryQueue;
}

/** The app's `events` option over `stores`. */
export function deployedEventsOptions(stores: DeployedEventStores): EventsAppOptions {
  return {
    ...eventsFromEnv(),
    log: stores.log,
    subscriptions: stores.subscriptions,
    handover: stores.handover,
    ...(stores.queue ? { queue: stores.queue, callbackMode: eventsCallbackModeFromEnv() } : {}),
  };
}
