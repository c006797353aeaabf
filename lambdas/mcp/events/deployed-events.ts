/**
 * The Events extension in a deployed function, from its environment (environment.ts): the
 * DynamoDB event log and webhook subscriptions on the operations table, and, where the stack
 * names a delivery queue, the SQS queue new occurrences fan out to. Status sync and the
 * built-in workers wrap their record store with `deployedEventRecording`; the MCP function
 * passes `deployedEventsOptions` to the app as its `events`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV } from '../../handlers/environment.ts';
import { secretsManagerKey } from '../../aws/secrets-manager-key.ts';
import { lazySqsWebhookDeliveryQueue } from '../../aws/lazy-sqs-webhook-delivery-queue.ts';
import { lazyDynamoDbEventLog, lazyDynamoDbWebhookSubscriptions, type LazyDynamoDbTable } from '../../aws/lazy-dynamodb-event-stores.ts';
import { eventsCallbackModeFromEnv, eventsDeliveryQueueUrlFromEnv, eventsFromEnv } from '../../handlers/environment.ts';
import type { Logger, RecordStore } from '../../operations/ports.ts';
import { cachedServerKey, type ServerKey } from '../../shared/server-key.ts';
import { createAppEvents, type EventsAppOptions } from './app-events.ts';

type Table = { client: DynamoDBClient; tableName: string };

/**
 * The app's `events` option in a deployed MCP function. The log, the subscriptions and the
 * SQS client load on first use: a poll reads none of them, and importing them (with the
 * DynamoDB client, which the MCP function builds on first need) was most of a cold start.
 */
export function deployedEventsOptions(table: LazyDynamoDbTable): EventsAppOptions {
  const queueUrl = eventsDeliveryQueueUrlFromEnv();
  return {
    ...eventsFromEnv(),
    log: lazyDynamoDbEventLog(table),
    subscriptions: lazyDynamoDbWebhookSubscriptions(table),
    ...(queueUrl ? { queue: lazySqsWebhookDeliveryQueue(queueUrl), callbackMode: eventsCallbackModeFromEnv() } : {}),
  };
}

/** `store`, appending each occurrence its writes amount to (and fanning it out to webhooks), as the environment configures events. */
export function deployedEventRecording(store: RecordStore, table: Table, logger: Logger): RecordStore {
  const options = deployedEventsOptions({ client: { get: () => Promise.resolve(table.client), built: () => table.client }, tableName: table.tableName });
  // Only subscribe and delivery open sealed secrets; a function without the key's ARN never asks for it.
  const secretArn = process.env[ENV.secretArn];
  const secretKey: ServerKey = secretArn ? cachedServerKey(secretsManagerKey(secretArn)) : () => Promise.reject(new Error(`${ENV.secretArn} is not set`));
  return createAppEvents(options, { logger, secretKey, local: false }).recordingStore(store);
}
