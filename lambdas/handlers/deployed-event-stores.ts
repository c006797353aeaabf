/**
 * The Events extension's AWS adapters for a deployed function that writes operation records
 * (status sync, the built-in workers): the DynamoDB event log, handover marks and webhook
 * subscriptions on the operations table, the SQS delivery queue where the stack names one (its
 * client loaded on the first enqueue), and the server key from Secrets Manager. Wiring only:
 * the Events logic over them is deployed-events.ts.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbEventHandover } from '../aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../aws/dynamodb-webhook-subscriptions.ts';
import { lazySqsWebhookDeliveryQueue } from '../aws/lazy-sqs-webhook-delivery-queue.ts';
import { secretsManagerKey } from '../aws/secrets-manager-key.ts';
import { deployedEventRecording } from '../mcp/events/deployed-events.ts';
import type { DeployedEventStores } from '../mcp/events/deployed-events-options.ts';
import type { Logger, RecordStore } from '../operations/ports.ts';
import { cachedServerKey, type ServerKey } from '../shared/server-key.ts';
import { ENV, eventsDeliveryQueueUrlFromEnv } from './environment.ts';

type Table = { client: DynamoDBClient; tableName: string };

/** The stores on `table`, and the queue the environment names. */
export function deployedEventStores(table: Table): DeployedEventStores {
  const queueUrl = eventsDeliveryQueueUrlFromEnv();
  return {
    log: new DynamoDbEventLog(table),
    subscriptions: new DynamoDbWebhookSubscriptions(table),
    handover: new DynamoDbEventHandover(table),
    ...(queueUrl ? { queue: lazySqsWebhookDeliveryQueue(queueUrl) } : {}),
  };
}

/** The server key, read on first need: only subscribe and delivery open sealed secrets, and a function without the key's ARN never asks for it. */
export function deployedServerKey(): ServerKey {
  const secretArn = process.env[ENV.secretArn];
  return secretArn ? cachedServerKey(secretsManagerKey(secretArn)) : () => Promise.reject(new Error(`${ENV.secretArn} is not set`));
}

/** `store` on `table`, appending each occurrence its writes amount to (and fanning it out to webhooks), as the environment configures events. */
export function deployedEventRecordingStore(store: RecordStore, table: Table, logger: Logger): RecordStore {
  return deployedEventRecording(store, deployedEventStores(table), logger, deployedServerKey());
}
