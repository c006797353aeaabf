/**
 * Appending occurrences to the event log as operation records change. The record store is
 * wrapped (`eventRecordingStore`): each conditional write that took effect is described
 * (which occurrences it is, a function the edge supplies) and each occurrence appended, so
 * every writer (status sync, the workers' reports and questions, cancel, reconciliation)
 * feeds the log without knowing it. An occurrence's `eventId` is derived from what it is,
 * so a write seen twice (a redelivered status event) appends it once. A new entry is then
 * handed on (`onAppended`): webhook fan-out.
 */
import { createHash } from 'node:crypto';
import type { OperationChanges, OperationRecord } from '../operations/operation.ts';
import type { Logger, RecordStore } from '../operations/ports.ts';
import { streamOf, type EventEntry, type EventLog } from './event-log.ts';

/** An occurrence before the log places it. */
export interface OccurrenceDraft {
  readonly name: string;
  readonly eventId: string;
  /** Epoch ms. */
  readonly at: number;
  readonly operationId: string;
  readonly tool: string;
  readonly data: Record<string, unknown>;
}

/** The occurrences a write that took effect (`changes`, leaving `record`) amounts to; usually none. */
export type DescribeChange = (changes: OperationChanges, record: OperationRecord) => OccurrenceDraft[];

/** A stable `eventId`: the same owner and parts give the same id, so retries and redeliveries dedupe. */
export function eventIdFor(ownerId: string, ...parts: Array<string | number>): string {
  return `evt_${createHash('sha256')
    .update([ownerId, ...parts].join('\n'))
    .digest('base64url')
    .slice(0, 32)}`;
}

export interface EventRecorderOptions {
  readonly log: EventLog;
  readonly retentionMs: number;
  readonly logger: Logger;
  /** Called with each entry the log did not hold before (webhook fan-out); its failure is logged. */
  readonly onAppended?: (entry: EventEntry) => Promise<void>;
  /** Epoch ms, the entries' place in the log. @default Date.now */
  readonly now?: () => number;
}

export class EventRecorder {
  constructor(private readonly options: EventRecorderOptions) {}

  /** Appends each occurrence once, then hands the new ones on. A failure is logged: the record's own write stands. */
  async record(ownerId: string, drafts: readonly OccurrenceDraft[]): Promise<void> {
    for (const draft of drafts) {
      const loggedAt = (this.options.now ?? Date.now)();
      const entry: EventEntry = {
        ...draft,
        ownerId,
        stream: streamOf(draft.name, draft.operationId),
        loggedAt,
        expiresAt: Math.ceil((loggedAt + this.options.retentionMs) / 1000),
      };
      let created: boolean;
      try {
        created = (await this.appendWithRetry(entry)).created;
      } catch (error) {
        // Names and ids only: the payload may carry tool data.
        this.options.logger.error('event not appended', { eventId: entry.eventId, name: entry.name, error: describe(error) });
        continue;
      }
      if (!created || !this.options.onAppended) continue;
      try {
        await this.options.onAppended(entry);
      } catch (error) {
        this.options.logger.error('event not handed to webhook delivery', { eventId: entry.eventId, name: entry.name, error: describe(error) });
      }
    }
  }

  private async appendWithRetry(entry: EventEntry): Promise<{ created: boolean }> {
    try {
      return await this.options.log.append(entry);
    } catch {
      // One more try: a throttled or dropped write is usually gone the second time.
      return this.options.log.append(entry);
    }
  }
}

/** `store`, appending the occurrences each status write that took effect amounts to. */
export function eventRecordingStore(store: RecordStore, describeChange: DescribeChange, recorder: EventRecorder, logger: Logger): RecordStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'transition') {
        return async (...args: Parameters<RecordStore['transition']>) => {
          const updated = await target.transition(...args);
          if (updated) {
            let drafts: OccurrenceDraft[] = [];
            try {
              drafts = describeChange(args[2], updated);
            } catch (error) {
              logger.error('event not described', { error: describe(error) });
            }
            if (drafts.length > 0) await recorder.record(updated.ownerId, drafts);
          }
          return updated;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the store itself: adapters keep their clients in private fields.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
