/**
 * The Events extension in a deployed function, from its environment (environment.ts):
 * the DynamoDB event log on the operations table, and the record store every writer of
 * operation records wraps so its writes feed the log. Used by status sync and the built-in
 * workers; the MCP function passes the same log to the app (`events.log`).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDbEventLog } from '../../events/dynamodb-event-log.ts';
import { resolveEventsSettings } from '../../events/events-settings.ts';
import { eventsFromEnv } from '../../handlers/environment.ts';
import type { Logger, RecordStore } from '../../operations/ports.ts';
import { withEventRecording } from './event-recording.ts';

/** `store`, appending each occurrence its writes amount to, as the environment configures events. */
export function deployedEventRecording(store: RecordStore, aws: { client: DynamoDBClient; tableName: string }, logger: Logger): RecordStore {
  const settings = resolveEventsSettings(eventsFromEnv());
  return withEventRecording(store, { log: new DynamoDbEventLog(aws), settings, logger });
}
