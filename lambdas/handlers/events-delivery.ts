/**
 * Lambda entry point for the Events extension's webhook deliveries: an SQS event source mapping
 * with ReportBatchItemFailures invokes it with batches of delivery jobs. Wiring only: the AWS
 * adapters are built here once per container from the environment (environment.ts): the
 * subscriptions and the event log on the operations table, the server key in Secrets Manager
 * (the sealed signing secrets), the SSRF-guarded sender in the deployment's callback mode (public
 * https only; the local as-deployed runner alone switches it to loopback callbacks), and the
 * wire form of an operation's end from the edge's error table; webhook-job-runner.ts delivers
 * over them, and each batch runs through sqs-delivery-batch.ts. With OpenTelemetry's environment
 * set (the construct's tracing setting), the SDK starts at init and each batch's spans are
 * flushed before the invocation returns, as Lambda may freeze the container right after.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DEPLOYED_CLIENT_CONFIG } from '../aws/aws-client-config.ts';
import { DynamoDbEventLog } from '../aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../aws/dynamodb-webhook-subscriptions.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { SQS_CLIENT_CONFIG, SqsWebhookDeliveryQueue } from '../aws/sqs-webhook-delivery-queue.ts';
import { resolveEventsSettings } from '../events/events-settings.ts';
import { operationEndedError } from '../events/operation-ended.ts';
import type { DeliverWebhookJob } from '../events/webhook-delivery-job.ts';
import { createWebhookJobRunner } from '../events/webhook-job-runner.ts';
import { createWebhookSender } from '../events/webhooks/webhook-sender.ts';
import { createSqsDeliveryBatch, type RetryScheduler, type SqsBatchResponse, type SqsDeliveryEvent } from '../events/webhooks/sqs-delivery-batch.ts';
import { consoleLogger } from '../logging/logger.ts';
import { tracedLambdaHandler } from '../observability/traced-lambda-handler.ts';
import type { Logger } from '../operations/ports.ts';
import { cachedServerKey } from '../shared/server-key.ts';
import { eventsWireError } from '../mcp/edge/events-wire-errors.ts';
import { ENV, eventsCallbackModeFromEnv, eventsFromEnv, requiredEnv } from './environment.ts';

/** The handler for one delivery function: `deliver` runs each job, `queue` postpones the retried ones. */
export function createEventsDeliveryHandler(
  deliver: DeliverWebhookJob,
  queue: RetryScheduler,
  logger: Logger = consoleLogger,
): (event: SqsDeliveryEvent) => Promise<SqsBatchResponse> {
  return createSqsDeliveryBatch({ deliver, retries: queue, logger });
}

const table = { client: new DynamoDBClient(DEPLOYED_CLIENT_CONFIG), tableName: requiredEnv(ENV.tableName) };
const queue = new SqsWebhookDeliveryQueue({ client: new SQSClient(SQS_CLIENT_CONFIG), queueUrl: requiredEnv(ENV.eventsDeliveryQueueUrl) });
const deliver = createWebhookJobRunner({
  store: new DynamoDbWebhookSubscriptions(table),
  log: new DynamoDbEventLog(table),
  send: createWebhookSender({ mode: eventsCallbackModeFromEnv() }),
  secretKey: cachedServerKey(secretsManagerKey(requiredEnv(ENV.secretArn))),
  settings: resolveEventsSettings(eventsFromEnv()),
  logger: consoleLogger,
  operationEnded: eventsWireError(operationEndedError()),
});

/** Lambda entry point: one SQS batch per invocation, its failed items reported for redelivery. */
export const handler = tracedLambdaHandler('async-mcp-events-delivery', createEventsDeliveryHandler(deliver, queue));
