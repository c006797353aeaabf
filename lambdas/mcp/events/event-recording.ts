/**
 * A record store that feeds the event log, as every writer of operation records needs it:
 * the MCP function (cancel, reconciliation), status sync, and the workers that report
 * progress and ask questions. With events turned off, the store is returned unchanged.
 */
import type { EventHandover } from '../../events/event-handover.ts';
import type { EventEntry, EventLog } from '../../events/event-log.ts';
import { EventRecorder, eventRecordingStore } from '../../events/event-recorder.ts';
import { retentionMsOf, type EventsSettings } from '../../events/events-settings.ts';
import type { Logger, RecordStore } from '../../operations/ports.ts';
import { describeOperationChange } from './operation-occurrences.ts';

export interface EventRecordingOptions {
  readonly log: EventLog;
  readonly settings: Pick<EventsSettings, 'enabled' | 'retentionHours'>;
  readonly logger: Logger;
  /** Webhook fan-out for each new entry; none where webhooks are not configured. */
  readonly onAppended?: (entry: EventEntry) => Promise<number>;
  /** Which entries were handed on; without it, an entry already in the log is not handed on again. */
  readonly handover?: EventHandover;
}

export function withEventRecording(store: RecordStore, options: EventRecordingOptions): RecordStore {
  if (!options.settings.enabled) return store;
  const recorder = new EventRecorder({
    log: options.log,
    retentionMs: retentionMsOf(options.settings),
    logger: options.logger,
    ...(options.onAppended ? { onAppended: options.onAppended } : {}),
    ...(options.handover ? { handover: options.handover } : {}),
  });
  return eventRecordingStore(store, describeOperationChange, recorder, options.logger);
}
