/**
 * Lambda entry point for the Events extension's webhook deliveries: an SQS event source mapping
 * with ReportBatchItemFailures invokes it with batches of delivery jobs. Wiring only: the clients
 * are built once per container (webhook-job-runner.ts builds the delivery from the environment,
 * with the wire form of an operation's end from the edge's error table), and each batch runs
 * through sqs-delivery-batch.ts.
 */
import { SQSClient } from '@aws-sdk/client-sqs';
import { ENV } from './environment.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../aws/sqs-webhook-delivery-queue.ts';
import type { DeliverWebhookJob } from '../events/webhook-delivery-job.ts';
import { createWebhookJobRunner } from '../events/webhook-job-runner.ts';
import { operationEndedError } from '../events/operation-ended.ts';
import { eventsWireError } from '../mcp/edge/events-wire-errors.ts';
import { createSqsDeliveryBatch, type RetryScheduler, type SqsBatchResponse, type SqsDeliveryEvent } from '../events/webhooks/sqs-delivery-batch.ts';
import { consoleLogger } from '../logging/logger.ts';
import type { Logger } from '../operations/ports.ts';
import { requiredEnv } from './environment.ts';

/** The handler for one delivery function: `deliver` runs each job, `queue` postpones the retried ones. */
export function createEventsDeliveryHandler(
  deliver: DeliverWebhookJob,
  queue: RetryScheduler,
  logger: Logger = consoleLogger,
): (event: SqsDeliveryEvent) => Promise<SqsBatchResponse> {
  return createSqsDeliveryBatch({ deliver, retries: queue, logger });
}

const queue = new SqsWebhookDeliveryQueue({ client: new SQSClient(SQS_CLIENT_CONFIG), queueUrl: requiredEnv(ENV.eventsDeliveryQueueUrl) });

/** Lambda entry point: one SQS batch per invocation, its failed items reported for redelivery. */
export const handler = createEventsDeliveryHandler(createWebhookJobRunner({ operationEnded: eventsWireError(operationEndedError()) }), queue);
