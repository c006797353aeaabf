/**
 * How operations end: an execution's state applied to its record (status-sync and
 * reconciliation), a cancel, an abandoned record, and the failure of a record whose
 * execution is gone. Every end is one conditional transition from a non-terminal status,
 * so a redelivered event or a race between cancel and completion never overwrites a
 * terminal state; the write that wins it gives the active slot back.
 */
import { releaseActiveSlot, type RepairBudget, type SlotHolders } from './active-slots.ts';
import { expiryFor, statusMessageFor, terminalChanges } from './execution-outcome.ts';
import { cancelableByRequestId, isTerminal, type OperationKey, type OperationRecord, type OperationStatus, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { readLiveRecord, type StaleRecords } from './operation-reads.ts';
import { isExpired, type OperationsContext } from './operations-options.ts';
import { ExecutionNotFoundError, RecordTooLargeError, type ExecutionSnapshot, type RecordStore } from './ports.ts';
import { needsReconcile } from './reconcile-cadence.ts';
import { endRecord } from './record-updates.ts';
import { settleResult } from './result-store.ts';

const NON_TERMINAL: readonly OperationStatus[] = ['submitted', 'working', 'input_required'];
/** A record with no execution this long after its creation lost its starter (a crash between steps). */
export const STALLED_START_MS = 60_000;
/** The error a stopped execution ends with. */
export const CANCEL_ERROR = 'Mcp.Canceled';

/** The changes of a terminal transition. */
export type TerminalChanges = Parameters<RecordStore['transition']>[2];

export class Settlement implements StaleRecords, SlotHolders {
  constructor(private readonly context: OperationsContext) {}

  /**
   * `readCurrent`'s second half: a record not updated for a reconcile interval is claimed by
   * a compare-and-set of `updatedAt` and checked against its execution; one that is not, or
   * whose claim another poller won, is returned as read.
   */
  async reconcileIfStale(record: OperationRecord): Promise<OperationRecord> {
    const now = this.context.clock.now();
    if (!needsReconcile(record, now, this.context.limits)) return record;
    const claimed = await this.context.store.transition(record, [record.status], { updatedAt: now }, { ifUpdatedAt: record.updatedAt });
    if (!claimed) return record;
    return this.reconcileWithExecution(claimed);
  }

  /** Settles a non-terminal record with its execution, asked by the derivable ARN. */
  private async reconcileWithExecution(record: OperationRecord): Promise<OperationRecord> {
    const { engine, catalog, clock } = this.context;
    const executionArn = record.executionArn;
    let snapshot: ExecutionSnapshot;
    try {
      if (!executionArn) throw new ExecutionNotFoundError(record.executionName);
      snapshot = await engine.describe(executionArn);
    } catch (error) {
      if (!(error instanceof ExecutionNotFoundError)) return record; // Engine unreachable: the record still answers.
      // A deploy that removed the tool deleted its state machine, and with it the execution.
      if (catalog && !catalog.get(record.tool)) {
        return this.fail(record, 'The tool was removed while this ran: its execution no longer exists');
      }
      // Give a start in progress its time; after that, nothing will ever run this operation.
      if (clock.now() - record.createdAt < STALLED_START_MS) return record;
      return this.fail(record, 'The execution for this operation never started or no longer exists');
    }
    return (await this.applyToRecord(record, snapshot)) ?? record;
  }

  /**
   * Whether a slot's operation is over: its record is terminal, expired or gone, or its
   * execution ended unseen. Runs only when the principal is at its limit (slot repair).
   * An expired record that still runs is abandoned (no client can read it any more): its
   * execution is stopped. A record past the stall window is reconciled at the cadence a
   * poll would reconcile it, so a lost start or a lost end frees its slot, and repairs
   * cost at most one DescribeExecution per operation per interval (and `budget` per repair).
   */
  async isOver(key: OperationKey, budget: RepairBudget): Promise<boolean> {
    const { store, clock, limits } = this.context;
    const record = await store.get(key);
    if (!record || isTerminal(record.status)) return true;
    if (isExpired(record, clock.now())) {
      await this.abandon(record, 'The operation expired before its execution ended');
      return true;
    }
    if (clock.now() - record.createdAt < STALLED_START_MS) return false;
    if (budget.engineChecks <= 0 || !needsReconcile(record, clock.now(), limits)) return false;
    budget.engineChecks--;
    return isTerminal((await this.reconcileIfStale(record)).status);
  }

  /**
   * Ends a record no client will come back for (it expired, or the only call that could
   * read it is over): stops its execution and ends the record canceled, which gives its
   * slot back. Nothing is kept past this: the record expires at once.
   */
  async abandon(key: OperationKey, reason: string): Promise<void> {
    const record = await this.context.store.get(key);
    if (!record || isTerminal(record.status)) return;
    if (record.executionArn) await this.stopQuietly(record.executionArn, reason);
    const now = this.context.clock.now();
    await this.finish(record, {
      status: 'canceled',
      statusMessage: reason,
      updatedAt: now,
      completedAt: now,
      expiresAt: Math.floor(now / 1000),
    });
  }

  private async fail(record: OperationRecord, message: string): Promise<OperationRecord> {
    const failed = await this.finishFailed(record, { kind: 'internal-error', message });
    return failed ?? (await readLiveRecord(this.context, record));
  }

  /** Ends `record` as failed with `outcome`, now; undefined when another writer ended it first. */
  finishFailed(record: OperationRecord, outcome: Outcome): Promise<OperationRecord | undefined> {
    const now = this.context.clock.now();
    return this.finish(record, {
      status: 'failed',
      statusMessage: statusMessageFor('failed', outcome),
      updatedAt: now,
      completedAt: now,
      outcome,
      ...expiryFor(now, record.keepAliveSeconds),
    });
  }

  /**
   * A terminal transition of `record` (as last read); the one that wins it gives the active
   * slot back. Pending questions go and reports are trimmed with it (see `endRecord`).
   */
  async finish(record: OperationRecord, changes: TerminalChanges): Promise<OperationRecord | undefined> {
    const key: OperationKey = { ownerId: record.ownerId, token: record.token };
    const { store, clock, logger } = this.context;
    const done = await endRecord(store, clock, record, NON_TERMINAL, changes);
    // The alias the start recorded with the slot goes with it (unless a later call took it).
    if (done) await releaseActiveSlot(store, logger, key, cancelableByRequestId(done.dialect) ? done.requestId : undefined);
    return done;
  }

  /**
   * Applies an execution's state to its record (status-sync and reconciliation).
   * Terminal records are never overwritten; redelivery is harmless. Returns the record
   * as it stands after the write, or `undefined` when there is none or the execution is
   * not the record's (e.g. an event of a token reused after expiry).
   */
  async applyExecution(key: OperationKey, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    const record = await this.context.store.get(key);
    return record && this.applyToRecord(record, snapshot);
  }

  /** `applyExecution` with the record already read; the conditional writes make a stale read harmless. */
  private async applyToRecord(record: OperationRecord, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    const { store, clock, results, shapeResult } = this.context;
    const key: OperationKey = { ownerId: record.ownerId, token: record.token };
    if (!isExecutionOf(record, snapshot.executionArn)) return undefined;
    if (isTerminal(record.status)) {
      // Canceled before its execution started, or ended as never started while a StartExecution
      // was still on its way: the execution that came late runs for no one, and is stopped here.
      if (snapshot.status === 'RUNNING' && (record.status === 'canceled' || isFailedStart(record))) {
        await this.stopQuietly(snapshot.executionArn, record.status === 'canceled' ? 'Canceled while it was starting' : 'Its start had already failed');
      }
      return record;
    }
    const now = clock.now();
    const terminal = terminalChanges(snapshot, record.keepAliveSeconds, now);
    if (terminal) {
      try {
        return (await this.finish(record, await settleResult(results, shapeResult, record, terminal))) ?? (await store.get(key));
      } catch (error) {
        if (!(error instanceof RecordTooLargeError)) throw error;
      }
      // Still too large with its questions cleared and reports trimmed: the result goes to the bucket, whatever its size.
      if (results && terminal.outcome?.kind === 'result') {
        try {
          const spilled = await settleResult(results, shapeResult, record, terminal, true);
          return (await this.finish(record, spilled)) ?? (await store.get(key));
        } catch (error) {
          if (!(error instanceof RecordTooLargeError)) throw error;
        }
      }
      // Nothing left to move out of the record: say so instead of losing the operation.
      const outcome: Outcome = { kind: 'internal-error', message: 'The tool result is larger than the server can store' };
      const tooLarge = { ...terminal, status: 'failed' as const, statusMessage: statusMessageFor('failed', outcome), outcome };
      return (await this.finish(record, tooLarge)) ?? (await store.get(key));
    }
    // Records are created `working` now; one created `submitted` by an earlier version still moves on.
    if (record.status === 'submitted' && snapshot.status === 'RUNNING') {
      const working = await store.transition(key, ['submitted'], {
        status: 'working',
        statusMessage: statusMessageFor('working'),
        executionArn: snapshot.executionArn,
        updatedAt: now,
      });
      return working ?? (await store.get(key));
    }
    return record;
  }

  /**
   * Stops the execution and marks the operation canceled. The execution decides how it
   * ended: one that finished before the stop keeps its real outcome (and result). A
   * terminal operation is returned unchanged, so cancelling twice changes nothing.
   */
  async cancel(key: OperationKey, reason = 'Canceled by the client'): Promise<OperationRecord> {
    const { engine, clock, catalog } = this.context;
    const record = await readLiveRecord(this.context, key);
    if (isTerminal(record.status)) return record;
    const executionArn = record.executionArn;
    let snapshot: ExecutionSnapshot | undefined;
    let gone = false;
    if (executionArn) {
      let stopped = false;
      try {
        await engine.stop(executionArn, { error: CANCEL_ERROR, cause: reason });
        stopped = true;
        snapshot = await engine.describe(executionArn);
      } catch (error) {
        // Not started yet: the record says canceled, and the start stops what it starts.
        // Stopped, but how it ended is unknown (the DescribeExecution failed): a successful
        // StopExecution is a successful cancel; the ABORTED event or a reconcile settles it.
        if (!stopped && !(error instanceof ExecutionNotFoundError)) {
          throw new OperationError('INTERNAL', 'The workflow engine did not stop the execution', { cause: error });
        }
        gone = !stopped;
      }
    }
    if (snapshot && terminalChanges(snapshot, record.keepAliveSeconds, clock.now())) {
      return (await this.applyToRecord(record, snapshot)) ?? (await readLiveRecord(this.context, key));
    }
    const now = clock.now();
    // A deploy that removed the tool took its machine and execution: nothing was left to stop.
    const removed = gone && catalog !== undefined && !catalog.get(record.tool);
    const canceled = await this.finish(record, {
      status: 'canceled',
      statusMessage: removed ? 'The operation was canceled; its tool was removed while it ran, and its execution with it.' : statusMessageFor('canceled'),
      updatedAt: now,
      completedAt: now,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    return canceled ?? (await readLiveRecord(this.context, key));
  }

  /** Stops an execution; one that does not exist (never started, or gone) is already stopped. */
  async stopQuietly(executionArn: string, cause: string): Promise<void> {
    try {
      await this.context.engine.stop(executionArn, { error: CANCEL_ERROR, cause });
    } catch (error) {
      if (!(error instanceof ExecutionNotFoundError)) throw error;
    }
  }
}

/** A record ended because its StartExecution failed and the engine had no such execution (see starts.ts). */
function isFailedStart(record: OperationRecord): boolean {
  return record.status === 'failed' && record.outcome?.kind === 'internal-error' && record.outcome.failedStart === true;
}

/**
 * Whether an execution is the record's own: its ARN names the record's execution. A Step
 * Functions ARN ends with `:<name>`; a Lambda durable execution's with `/durable-execution/<name>/<id>`.
 */
function isExecutionOf(record: OperationRecord, executionArn: string): boolean {
  const name = record.executionName;
  if (executionArn.endsWith(`:${name}`)) return true;
  const at = executionArn.lastIndexOf(`/durable-execution/${name}/`);
  return at >= 0 && !executionArn.slice(at + `/durable-execution/${name}/`.length).includes('/');
}
