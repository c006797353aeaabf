/**
 * `createWebhookJobRunner`: the `DeliverWebhookJob` of a delivery function over the ports it is
 * given (the subscriptions and the event log, the sender, the server key), which its handler
 * builds: event logic reaches AWS only through ports wired in handlers. Delivery sends; it never
 * fans out, so it enqueues nothing.
 */
import { systemClock, type Clock, type Logger } from '../operations/ports.ts';
import type { ServerKey } from '../shared/server-key.ts';
import type { EventLog } from './event-log.ts';
import type { EventsSettings } from './events-settings.ts';
import { createDeliverWebhookJob } from './webhook-delivery.ts';
import type { DeliverWebhookJob } from './webhook-delivery-job.ts';
import type { SubscriptionEnding, WebhookSubscriptionStore } from './webhook-subscription.ts';
import { WebhookSubscriptions } from './webhook-subscriptions.ts';
import type { WebhookSender } from './webhooks/webhook-sender.ts';

export interface WebhookJobRunnerPorts {
  readonly store: WebhookSubscriptionStore;
  readonly log: EventLog;
  /** The SSRF-guarded sender in the deployment's callback mode. */
  readonly send: WebhookSender;
  /** Opens the sealed signing secrets. */
  readonly secretKey: ServerKey;
  readonly settings: EventsSettings;
  readonly logger: Logger;
  /** The `terminated` error of a subscription whose operation ended, in wire form (the edge's table assigns its code). */
  readonly operationEnded: SubscriptionEnding;
  /** @default the system clock */
  readonly clock?: Clock;
}

export function createWebhookJobRunner(ports: WebhookJobRunnerPorts): DeliverWebhookJob {
  const { clock = systemClock, ...rest } = ports;
  const subscriptions = new WebhookSubscriptions({
    ...rest,
    clock,
    queue: {
      enqueue: async () => {
        throw new Error('the delivery function enqueues no jobs');
      },
    },
  });
  return createDeliverWebhookJob(subscriptions);
}
