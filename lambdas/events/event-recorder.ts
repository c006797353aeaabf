/**
 * Appending occurrences to the event log as operation records change. The record store is
 * wrapped (`eventRecordingStore`): each conditional write that took effect is described
 * (which occurrences it is, a function the edge supplies) and each occurrence appended, so
 * every writer (status sync, the workers' reports and questions, cancel, reconciliation)
 * feeds the log without knowing it. An occurrence's `eventId` is derived from what it is,
 * so a write seen twice (a redelivered status event) appends it once. A new entry is then
 * handed on (`onAppended`): webhook fan-out. A failed append or hand-on fails the write's
 * caller (the record's own write stands), so the event that caused it is redelivered; the
 * redelivery finds the record already ended and settles its events again
 * (`settleEventsOf`): the append is idempotent, and an entry not yet marked handed over
 * (event-handover.ts) is handed on again. A client's request records leniently
 * (`withLenientEventRecording`): its answer stands, and status sync settles the end.
 */
import { contextSlot } from '../shared/context-slot.ts';
import { hashForLog } from '../observability/request-context.ts';
import { type TraceCarrier, traceIdOf } from '../observability/trace-context.ts';
import { currentCarrier, SpanKind, withSpan } from '../observability/tracing.ts';
import { createHash } from 'node:crypto';
import type { OperationChanges, OperationRecord } from '../operations/operation.ts';
import type { Logger, RecordStore } from '../operations/ports.ts';
import { isTerminal } from '../operations/operation.ts';
import type { EventHandover } from './event-handover.ts';
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
  /** Its operation's trace (the record's `trace`): the append is a span of it. */
  readonly trace?: TraceCarrier;
}

/**
 * Attributes of the spans of an occurrence's life (its append here, its deliveries): names and
 * hashed ids, never its data. The operation is named by its id's log hash (`operationHash` in
 * log lines): an id is a client's handle on its operation, kept out of telemetry as out of logs.
 */
export const EVENT_SPAN_ATTRIBUTES = {
  operationHash: 'async_mcp.operation.hash',
  tool: 'gen_ai.tool.name',
  eventName: 'async_mcp.event.name',
  eventId: 'async_mcp.event.id',
} as const;

/** The parent an occurrence's span takes: the active span when it is already in the operation's trace (status sync's), else the operation's start. */
export function occurrenceParent(trace: TraceCarrier | undefined): TraceCarrier | undefined {
  const active = currentCarrier();
  return active && trace && traceIdOf(active) === traceIdOf(trace) ? undefined : trace;
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
  /** Called with each entry not yet handed on (webhook fan-out), answering how many jobs it made; its failure is logged and thrown. */
  readonly onAppended?: (entry: EventEntry) => Promise<number>;
  /** Which entries were handed on; without it, only an entry the log did not hold before is. */
  readonly handover?: EventHandover;
  /** Epoch ms, the entries' place in the log. @default Date.now */
  readonly now?: () => number;
}

/** Set while a client's request runs: see `withLenientEventRecording`. */
const lenient = contextSlot<true>('lenient event recording');

/**
 * Runs `work` (a client's request) with recording failures logged, not thrown: the client gets
 * the answer its write earned (a poll, a cancel), and the end is recorded again by status sync,
 * which records strictly and is redelivered when it fails.
 */
export function withLenientEventRecording<T>(work: () => Promise<T>): Promise<T> {
  return lenient.run(true, work);
}

export class EventRecorder {
  constructor(private readonly options: EventRecorderOptions) {}

  /**
   * Appends each occurrence once, then hands on each one not handed on yet. A failure is logged
   * and thrown, after the record's own write: its caller fails, and a redelivery records again.
   * Within `withLenientEventRecording` it is only logged; `false` then says something was left.
   */
  async record(ownerId: string, drafts: readonly OccurrenceDraft[]): Promise<boolean> {
    let complete = true;
    for (const draft of drafts) {
      const { trace, ...occurrence } = draft;
      const attributes = {
        [EVENT_SPAN_ATTRIBUTES.operationHash]: hashForLog(draft.operationId),
        [EVENT_SPAN_ATTRIBUTES.tool]: draft.tool,
        [EVENT_SPAN_ATTRIBUTES.eventName]: draft.name,
        [EVENT_SPAN_ATTRIBUTES.eventId]: draft.eventId,
      };
      const parent = occurrenceParent(trace);
      const done = await withSpan(`event ${draft.name}`, { kind: SpanKind.PRODUCER, attributes, ...(parent ? { parent } : {}) }, () =>
        this.recordOne(ownerId, occurrence, currentCarrier() ?? trace),
      );
      complete &&= done;
    }
    return complete;
  }

  /** Appends one occurrence and hands it on; whether both went (see `record`). */
  private async recordOne(ownerId: string, draft: Omit<OccurrenceDraft, 'trace'>, trace: TraceCarrier | undefined): Promise<boolean> {
    const { handover, onAppended, logger } = this.options;
    const loggedAt = (this.options.now ?? Date.now)();
    const drafted: EventEntry = {
      ...draft,
      ownerId,
      stream: streamOf(draft.name, draft.operationId),
      loggedAt,
      expiresAt: Math.ceil((loggedAt + this.options.retentionMs) / 1000),
      ...(trace ? { trace } : {}),
    };
    let appended: { created: boolean; entry?: EventEntry };
    try {
      appended = await this.appendWithRetry(drafted);
    } catch (error) {
      // Names and ids only: the payload may carry tool data.
      logger.error('event not appended', { eventId: drafted.eventId, name: drafted.name, error: describe(error) });
      if (!lenient.getStore()) throw error;
      return false;
    }
    if (!onAppended) return true;
    // The log's own copy when it says where it placed the entry.
    const entry = appended.entry ?? drafted;
    try {
      if (!appended.created && (!handover || (await handover.handedOver(ownerId, entry.eventId)))) return true;
      // Nothing enqueued, nothing to mark: a redelivery fans out again to whoever subscribed since (a duplicate at most, same id).
      if ((await onAppended(entry)) > 0) await handover?.markHandedOver(ownerId, entry.eventId, (this.options.now ?? Date.now)());
    } catch (error) {
      logger.error('event not handed to webhook delivery', { eventId: entry.eventId, name: entry.name, error: describe(error) });
      if (!lenient.getStore()) throw error;
      return false;
    }
    return true;
  }

  private async appendWithRetry(entry: EventEntry): Promise<{ created: boolean; entry?: EventEntry }> {
    try {
      return await this.options.log.append(entry);
    } catch {
      // One more try: a throttled or dropped write is usually gone the second time.
      return this.options.log.append(entry);
    }
  }
}

/** The key a recording store answers `settleEventsOf` by. */
const SETTLE = Symbol('settleEventsOf');

type Settle = (record: OperationRecord) => Promise<void>;

/** Ends recorded by this container, so settling one just written costs nothing; bounded, as a container lives long. */
const MAX_REMEMBERED = 1000;

/**
 * `store`, appending the occurrences each status write that took effect amounts to. A failure to
 * record throws out of the write (which stands): see the module comment.
 */
export function eventRecordingStore(store: RecordStore, describeChange: DescribeChange, recorder: EventRecorder, logger: Logger): RecordStore {
  const recorded = new Set<string>();
  const endOf = (record: OperationRecord) => `${record.ownerId}\n${record.token}\n${record.createdAt}`;
  const record = async (changes: OperationChanges, updated: OperationRecord) => {
    let drafts: OccurrenceDraft[] = [];
    try {
      // Each occurrence joins its operation's trace, whoever described it.
      drafts = describeChange(changes, updated).map((draft) => (draft.trace || !updated.trace ? draft : { ...draft, trace: updated.trace }));
    } catch (error) {
      logger.error('event not described', { error: describe(error) });
    }
    const complete = drafts.length === 0 || (await recorder.record(updated.ownerId, drafts));
    // An end recorded only in part is settled again by status sync, even in this container.
    if (complete && isTerminal(updated.status)) {
      if (recorded.size >= MAX_REMEMBERED) recorded.clear();
      recorded.add(endOf(updated));
    }
  };
  const settle: Settle = async (ended) => {
    if (!isTerminal(ended.status) || recorded.delete(endOf(ended))) return;
    await record({ status: ended.status }, ended);
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === SETTLE) return settle;
      if (property === 'transition') {
        return async (...args: Parameters<RecordStore['transition']>) => {
          const updated = await target.transition(...args);
          if (updated) await record(args[2], updated);
          return updated;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the store itself: adapters keep their clients in private fields.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Records again the end of a record that was already terminal when a redelivered event came (a
 * first try that failed, or timed out, after the record's write): its end occurrence is appended
 * if missing and handed on if not handed on yet. Nothing for a store that records no events, or
 * for an end this store recorded itself.
 */
export async function settleEventsOf(store: RecordStore, record: OperationRecord): Promise<void> {
  const settle = (store as unknown as Record<symbol, Settle | undefined>)[SETTLE];
  if (settle) await settle(record);
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
