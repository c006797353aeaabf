/**
 * The Events parts only a single process runs (the local stack, the testing kit, tests): the
 * log, its marks and the webhook subscriptions in memory, and the in-process delivery queue
 * with the job it runs on timers. createAsyncMcpApp passes them as the app's defaults; the
 * deployed MCP function composes its app without them (its log and subscriptions are on
 * DynamoDB, its jobs go to SQS), so none of them is in its bundle.
 */
import { InMemoryEventHandover } from '../../events/in-memory-event-handover.ts';
import { InMemoryEventLog } from '../../events/in-memory-event-log.ts';
import { InMemoryWebhookSubscriptions } from '../../events/in-memory-webhook-subscriptions.ts';
import { createLocalWebhookDeliveryQueue } from '../../events/local-webhook-delivery-queue.ts';
import { createDeliverWebhookJob } from '../../events/webhook-delivery.ts';
import type { InProcessEvents } from './app-events.ts';

export const IN_PROCESS_EVENTS: InProcessEvents = {
  memoryLog: () => new InMemoryEventLog(),
  // A log in memory is one process's, so its marks can be too; a shared log must come with shared marks.
  memoryHandover: (log) => (log instanceof InMemoryEventLog ? new InMemoryEventHandover() : undefined),
  subscriptions: () => new InMemoryWebhookSubscriptions(),
  queue: createLocalWebhookDeliveryQueue,
  deliverJob: createDeliverWebhookJob,
};
