/**
 * `createWebhookJobRunner`: the `DeliverWebhookJob` of a deployed delivery function, built
 * from its environment (environment.ts): the operations table (subscriptions and the event
 * log), the server's key in Secrets Manager (the sealed signing secrets), the events settings,
 * and the SSRF-guarded sender in its AWS mode (public https only; the local as-deployed runner
 * alone switches it to loopback callbacks), and the error an operation's end sends in
 * `terminated` envelopes, which the handler gives. Built once per container.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEPLOYED_CLIENT_CONFIG } from '../aws/aws-client-config.ts';
import { ENV } from '../handlers/environment.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { eventsCallbackModeFromEnv, eventsFromEnv, requiredEnv } from '../handlers/environment.ts';
import { consoleLogger } from '../logging/logger.ts';
import { systemClock, type Logger } from '../operations/ports.ts';
import { cachedServerKey } from '../shared/server-key.ts';
import { DynamoDbEventLog } from '../aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../aws/dynamodb-webhook-subscriptions.ts';
import { resolveEventsSettings } from './events-settings.ts';
import { createDeliverWebhookJob } from './webhook-delivery.ts';
import type { DeliverWebhookJob } from './webhook-delivery-job.ts';
import type { SubscriptionEnding } from './webhook-subscription.ts';
import { WebhookSubscriptions } from './webhook-subscriptions.ts';
import { createWebhookSender, type WebhookSender } from './webhooks/webhook-sender.ts';

export interface WebhookJobRunnerOptions {
  /** @default a client with the deployed functions' bounded timeouts */
  readonly dynamodb?: DynamoDBClient;
  /** @default the SSRF-guarded sender in the environment's callback mode (public https callbacks only unless the local runner says otherwise) */
  readonly send?: WebhookSender;
  readonly logger?: Logger;
  /** The `terminated` error of a subscription whose operation ended, in wire form (the edge's table assigns its code). */
  readonly operationEnded: SubscriptionEnding;
}

export function createWebhookJobRunner(options: WebhookJobRunnerOptions): DeliverWebhookJob {
  const table = { client: options.dynamodb ?? new DynamoDBClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
  const subscriptions = new WebhookSubscriptions({
    store: new DynamoDbWebhookSubscriptions(table),
    log: new DynamoDbEventLog(table),
    send: options.send ?? createWebhookSender({ mode: eventsCallbackModeFromEnv() }),
    // Delivery sends; it never fans out, so it enqueues nothing.
    queue: {
      enqueue: async () => {
        throw new Error('the delivery function enqueues no jobs');
      },
    },
    settings: resolveEventsSettings(eventsFromEnv()),
    secretKey: cachedServerKey(secretsManagerKey(requiredEnv(ENV.secretArn))),
    clock: systemClock,
    logger: options.logger ?? consoleLogger,
    operationEnded: options.operationEnded,
  });
  return createDeliverWebhookJob(subscriptions);
}
