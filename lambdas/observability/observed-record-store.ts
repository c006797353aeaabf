/**
 * A RecordStore decorator that sees the lifecycle where it is decided: it counts a start on
 * a create that created, and an end on the transition that entered a terminal status (or
 * `input_required`). Writes are conditional, so exactly one writer wins each change and the
 * counts are exact however many pollers, redeliveries and retries run. It also names the
 * record a request touches (tool, dialect, operation hash) in the request's log context.
 * Every other method only forwards.
 */
import { isTerminal, type OperationChanges, type OperationKey, type OperationRecord, type OperationStatus } from '../operations/operation.ts';
import type { CreateResult, Page, RecordStore, RequestAlias, SlotAlias, SlotClaim } from '../operations/ports.ts';
import { METRIC, type MetricName, type MetricsRecorder } from './metrics-recorder.ts';
import { annotateRequest, hashForLog, requestLogFields } from './request-context.ts';

const ENDED: Partial<Record<OperationStatus, MetricName>> = {
  completed: METRIC.completed,
  failed: METRIC.failed,
  canceled: METRIC.cancelled,
};

/** Forwards every call to `store`; counts lifecycle changes in `metrics` and names the touched record in the log context. */
export class ObservedRecordStore implements RecordStore {
  constructor(
    private readonly store: RecordStore,
    private readonly metrics: MetricsRecorder,
  ) {}

  async create(record: OperationRecord): Promise<CreateResult> {
    const result = await this.store.create(record);
    if (result.created) this.metrics.count(METRIC.started, { tool: record.tool, dialect: record.dialect });
    this.touched(result.created ? result.record : result.existing);
    return result;
  }

  async get(key: OperationKey): Promise<OperationRecord | undefined> {
    const record = await this.store.get(key);
    if (record) this.touched(record);
    return record;
  }

  async transition(
    key: OperationKey,
    from: readonly OperationStatus[],
    changes: OperationChanges,
    options?: { ifUpdatedAt?: number },
  ): Promise<OperationRecord | undefined> {
    const updated = await this.store.transition(key, from, changes, options);
    if (!updated) return updated;
    // `from` holds what the record was; only a write from no terminal status entered one.
    const ended = ENDED[updated.status];
    if (ended && changes.status === updated.status && !from.some(isTerminal)) {
      this.metrics.count(ended, { tool: updated.tool, dialect: updated.dialect });
    }
    // Each stored question sets the status, even when the record already waits on another.
    if (changes.status === 'input_required') this.metrics.count(METRIC.inputRequired, { tool: updated.tool });
    this.touched(updated);
    return updated;
  }

  discard(key: OperationKey, from: readonly OperationStatus[]): Promise<boolean> {
    return this.store.discard(key, from);
  }

  listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    return this.store.listByOwner(ownerId, options);
  }

  putRequestAlias(ownerId: string, requestId: string, alias: RequestAlias): Promise<void> {
    return this.store.putRequestAlias(ownerId, requestId, alias);
  }

  deleteRequestAlias(ownerId: string, requestId: string): Promise<void> {
    return this.store.deleteRequestAlias(ownerId, requestId);
  }

  findRequestAlias(ownerId: string, requestId: string): Promise<RequestAlias | undefined> {
    return this.store.findRequestAlias(ownerId, requestId);
  }

  putExecutionPointer(executionName: string, key: OperationKey, expiresAt: number): Promise<void> {
    return this.store.putExecutionPointer(executionName, key, expiresAt);
  }

  findExecutionPointer(executionName: string): Promise<(OperationKey & { expiresAt: number }) | undefined> {
    return this.store.findExecutionPointer(executionName);
  }

  putLogLevel(ownerId: string, level: string, expiresAt: number): Promise<void> {
    return this.store.putLogLevel(ownerId, level, expiresAt);
  }

  findLogLevel(ownerId: string): Promise<{ level: string; expiresAt: number } | undefined> {
    return this.store.findLogLevel(ownerId);
  }

  claimActiveSlot(ownerId: string, token: string, limit: number, alias?: SlotAlias): Promise<SlotClaim> {
    return this.store.claimActiveSlot(ownerId, token, limit, alias);
  }

  releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void> {
    return this.store.releaseActiveSlot(ownerId, token, requestId);
  }

  listActiveSlots(ownerId: string): Promise<string[]> {
    return this.store.listActiveSlots(ownerId);
  }

  /**
   * The record a request works on names its tool, dialect and operation in its log lines.
   * The first record wins (or the one the request named): a start that repairs its owner's
   * slots reads other operations' records too.
   */
  private touched(record: OperationRecord): void {
    const context = requestLogFields();
    if (!context) return;
    const operationHash = hashForLog(record.token);
    if (context.operationHash !== undefined && context.operationHash !== operationHash) return;
    annotateRequest({ tool: record.tool, dialect: record.dialect, operationHash });
  }
}
