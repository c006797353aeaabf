/**
 * The Events extension in a deployed function that writes operation records (status sync, the
 * built-in workers), over the stores its handler builds (lambdas/handlers/deployed-event-stores.ts):
 * its record store appends each occurrence its writes amount to and fans it out to webhooks, as
 * the environment configures events. The MCP function passes `deployedEventsOptions`
 * (deployed-events-options.ts) to the app as its `events` instead.
 */
import type { Logger, RecordStore } from '../../operations/ports.ts';
import type { ServerKey } from '../../shared/server-key.ts';
import { createAppEvents } from './app-events.ts';
import { type DeployedEventStores, deployedEventsOptions } from './deployed-events-options.ts';

/** `store`, appending each occurrence its writes amount to (and fanning it out to webhooks). */
export function deployedEventRecording(store: RecordStore, stores: DeployedEventStores, logger: Logger, secretKey: ServerKey): RecordStore {
  return createAppEvents(deployedEventsOptions(stores), { logger, secretKey, local: false }).recordingStore(store);
}
