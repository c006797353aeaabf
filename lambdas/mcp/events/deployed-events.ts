/**
 * The Events extension in a deployed function, from its environment (environment.ts): the
 * DynamoDB event log and webhook subscriptions on the operations table, and, where the stack
 * names a delivery queue, the SQS queue new occurrences fan out to. Status sync and the
 * built-in workers wrap their record store with `deployedEventRecording`; the MCP function
 * passes `deployedEventsOptions` (deployed-events-options.ts) to the app as its `events`,
 * over stores that load on first use.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ENV } from '../../handlers/environment.ts';
import { secretsManagerKey } from '../../aws/secrets-manager-key.ts';
import { DynamoDbEventHandover } from '../../aws/dynamodb-event-handover.ts';
import { DynamoDbEventLog } from '../../aws/dynamodb-event-log.ts';
import { DynamoDbWebhookSubscriptions } from '../../aws/dynamodb-webhook-subscriptions.ts';
import type { Logger, RecordStore } from '../../operations/ports.ts';
import { cachedServerKey, type ServerKey } from '../../shared/server-key.ts';
import { createAppEvents } from './app-events.ts';
import { deployedEventsOptions } from './deployed-events-options.ts';

type Table = { client: DynamoDBClient; tableName: string };

/** `store`, appending each occurrence its writes amount to (and fanning it out to webhooks), as the environment configures events. */
export function deployedEventRecording(store: RecordStore, table: Table, logger: Logger): RecordStore {
  const options = deployedEventsOptions({
    log: new DynamoDbEventLog(table),
    subscriptions: new DynamoDbWebhookSubscriptions(table),
    handover: new DynamoDbEventHandover(table),
  });
  // Only subscribe and delivery open sealed secrets; a function without the key's ARN never asks for it.
  const secretArn = process.env[ENV.secretArn];
  const secretKey: ServerKey = secretArn ? cachedServerKey(secretsManagerKey(secretArn)) : () => Promise.reject(new Error(`${ENV.secretArn} is not set`));
  return createAppEvents(options, { logger, secretKey, local: false }).recordingStore(store);
}
