/**
 * The reads the other parts of the core share: a live record (not found and expired are
 * errors), the current one (checked against its execution when status-sync has been quiet
 * too long), a wait until one ends, and the operation an execution runs.
 */
import { linkActiveSpan } from '../observability/tracing.ts';
import { isTerminal, type OperationKey, type OperationRecord } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { isExpired, type OperationsContext } from './operations-options.ts';
import { MAX_ID_BYTES } from './ports.ts';

/** Settles a record status-sync has left alone for a reconcile interval (the settlement's side of a read). */
export interface StaleRecords {
  reconcileIfStale(record: OperationRecord): Promise<OperationRecord>;
}

/** The operation an execution runs, for executions whose input does not say. */
export interface ExecutionLookup {
  findByExecutionName(executionName: string): Promise<OperationKey | undefined>;
}

/** Reads a live record: not found and expired are errors. An id too long for a key names nothing. */
export async function readLiveRecord(context: Pick<OperationsContext, 'store' | 'clock'>, key: OperationKey): Promise<OperationRecord> {
  if (Buffer.byteLength(key.token) > MAX_ID_BYTES) throw new OperationError('NOT_FOUND', 'Operation not found');
  const record = await context.store.get(key);
  if (!record) throw new OperationError('NOT_FOUND', 'Operation not found');
  assertLive(record, context.clock.now());
  return record;
}

/** Throws EXPIRED for a record past its expiry (DynamoDB's TTL deletes items up to days late, so expiry is enforced here). */
export function assertLive(record: OperationRecord, nowMs: number): void {
  if (isExpired(record, nowMs)) throw new OperationError('EXPIRED', 'Operation has expired');
}

export class OperationReads implements ExecutionLookup {
  constructor(
    private readonly context: OperationsContext,
    private readonly stale: StaleRecords,
  ) {}

  /** Reads a live record: not found and expired are errors. */
  readLive(key: OperationKey): Promise<OperationRecord> {
    return readLiveRecord(this.context, key);
  }

  /**
   * The current record: one read while status-sync keeps it current. A record not
   * updated for a reconcile interval (which backs off as the operation ages, see
   * reconcile-cadence.ts) is checked against its execution by exactly one poller: the one
   * whose compare-and-set of `updatedAt` wins. So there is at most one DescribeExecution
   * per running operation per interval, however many poll.
   */
  async readCurrent(key: OperationKey): Promise<OperationRecord> {
    const record = await this.readLive(key);
    // A poll has its own parent; it links to the operation's trace (DESIGN §5b). A flag check with tracing off.
    linkActiveSpan(record.trace);
    return this.stale.reconcileIfStale(record);
  }

  /**
   * Waits until the operation is terminal, `until` holds for it (e.g. it asks a question)
   * or `boundMs` passes; returns the last record seen. Reads the store, so any instance can
   * wait on any operation; `onRead` sees every record read. Once `signal` aborts (the
   * waiting request ended), it stops at once: no timer or read outlives the request.
   */
  async waitFor(
    key: OperationKey,
    boundMs: number,
    until?: (record: OperationRecord) => boolean,
    onRead?: (record: OperationRecord) => Promise<void>,
    signal?: AbortSignal,
  ): Promise<OperationRecord> {
    const { clock } = this.context;
    const deadline = clock.now() + boundMs;
    let delay = 50;
    for (;;) {
      const record = await this.readCurrent(key);
      // Each record read goes to the caller (a waiting call streams its new reports from it).
      await onRead?.(record);
      const left = deadline - clock.now();
      if (isTerminal(record.status) || until?.(record) || left <= 0 || signal?.aborted) return record;
      await pause(Math.min(delay, left), signal);
      if (signal?.aborted) return record;
      delay = Math.min(delay * 2, 1000, record.pollIntervalSeconds * 1000);
    }
  }

  /** The operation an execution runs, for executions whose input does not say (see `putExecutionPointer`). */
  async findByExecutionName(executionName: string): Promise<OperationKey | undefined> {
    const pointer = await this.context.store.findExecutionPointer(executionName);
    if (!pointer || pointer.expiresAt * 1000 <= this.context.clock.now()) return undefined;
    return { ownerId: pointer.ownerId, token: pointer.token };
  }
}

/** Resolves after `ms`, or as soon as `signal` aborts, leaving neither its timer nor its listener behind. */
function pause(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}
