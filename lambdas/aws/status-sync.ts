/**
 * Turns an EventBridge "Step Functions Execution Status Change" event (RUNNING or
 * terminal, see status-events.ts) into an update of the operation record. Redelivery
 * and out-of-order delivery are harmless: the core's conditional writes never
 * overwrite a terminal state, and an event of another execution than the record's
 * (say, of a token reused after expiry) never writes into it.
 */
import { OPERATION_END_ATTRIBUTE, OPERATION_SPANS } from '../observability/span-names.ts';
import { operationTraceOf } from '../observability/traced-invocation.ts';
import { linkActiveSpan, type Span, SpanKind, withSpan } from '../observability/tracing.ts';
import { isTerminal, type OperationRecord } from '../operations/operation.ts';
import type { OperationsService } from '../operations/operations-service.ts';
import type { ExecutionSnapshot, ExecutionStatus, WorkflowEngine } from '../operations/ports.ts';
import type { Logger } from '../operations/ports.ts';
import { parseJsonOrText } from '../shared/json-values.ts';
import { METRIC, noMetrics, type MetricsRecorder } from '../observability/metrics-recorder.ts';
import { withRequestContext } from '../observability/request-context.ts';
import type { InvocationContext } from '../observability/request-observer.ts';
import type { OperationEventSink } from './operation-events.ts';
import { type DurableStatusChangeEvent, durableExecutionNameOf, isDurableStatusChange } from './durable-status-events.ts';

export interface ExecutionStatusChangeEvent {
  id?: string;
  'detail-type'?: string;
  source?: string;
  /** When EventBridge emitted it (ISO 8601, to the second). */
  time?: string;
  detail: {
    executionArn: string;
    stateMachineArn?: string;
    name?: string;
    status: string;
    startDate?: number | null;
    stopDate?: number | null;
    input?: string | null;
    inputDetails?: { included?: boolean } | null;
    output?: string | null;
    outputDetails?: { included?: boolean } | null;
    error?: string | null;
    cause?: string | null;
  };
}

/** What the status-sync rules deliver: a state machine's execution or a durable function's. */
export type StatusChangeEvent = ExecutionStatusChangeEvent | DurableStatusChangeEvent;

export type StatusSyncHandler = (event: StatusChangeEvent, context?: InvocationContext) => Promise<void>;

/**
 * The handler over the core. Each event is one invocation: its log lines carry the Lambda
 * request id, and its metrics (the lag, and the ends the record store counts) are flushed
 * when it is handled. With `events`, each record it writes is then reported as an
 * `Operation Status Changed` event (operation-events.ts), after the write and best-effort.
 * With `settleEnd`, a record that is terminal has its end's events settled (appended if
 * missing, handed to webhook delivery if not yet): a first try that failed or timed out after
 * the record's write left them undone, and the write is never done again. Its failure, like a
 * failed write, fails the invocation, so EventBridge delivers the event again.
 */
export function createStatusSyncHandler(
  operations: OperationsService,
  engine: WorkflowEngine,
  logger: Logger,
  metrics: MetricsRecorder = noMetrics,
  events?: OperationEventSink,
  settleEnd?: (record: OperationRecord) => Promise<void>,
): StatusSyncHandler {
  const sync = async (event: StatusChangeEvent) => {
    const change = isDurableStatusChange(event) ? await durableChange(event, engine) : await stateMachineChange(event, engine);
    // A span of the operation's trace (DESIGN §5b), whose end the terminal write marks.
    const parent = operationTraceOf(change.snapshot.input);
    const attributes = { 'async_mcp.execution.status': change.status };
    return withSpan(OPERATION_SPANS.statusSync, { kind: SpanKind.CONSUMER, attributes, ...(parent ? { parent } : {}) }, (span) =>
      apply(event, change, span, parent === undefined),
    );
  };
  const apply = async (event: StatusChangeEvent, change: StatusChange, span: Span, linkRecord: boolean) => {
    const { executionArn, status, snapshot } = change;
    // A machine that gets only the arguments is found by its execution's name; so is one
    // whose arguments merely look like our envelope.
    const fromInput = operationKeyOf(snapshot.input);
    let applied = fromInput && (await operations.applyExecution(fromInput, snapshot));
    if (!applied) {
      const byName = await operations.findByExecutionName(change.name);
      if (!byName && !fromInput) {
        logger.error('status event for an execution without an operation', { eventId: event.id, executionArn });
        return;
      }
      if (byName) applied = await operations.applyExecution(byName, snapshot);
    }
    if (!applied) {
      // Expired and deleted, or a record of another execution: nothing to write.
      logger.warn('status event matches no operation record', { eventId: event.id, executionArn, status });
      return;
    }
    // An input that does not carry the trace (arguments only): the record's, as a link.
    if (linkRecord) linkActiveSpan(applied.trace);
    if (isTerminal(applied.status)) span.setAttribute(OPERATION_END_ATTRIBUTE, applied.status);
    if (settleEnd && isTerminal(applied.status)) await settleEnd(applied);
    const changedAt = change.changedAt ?? emittedAt(event);
    if (changedAt !== undefined) metrics.milliseconds(METRIC.statusSyncLag, Math.max(0, Date.now() - changedAt), {});
    // A RUNNING event that comes after the end (EventBridge does not keep order) reports
    // nothing: the terminal event reported the end, and a stale "working" must not follow it.
    if (events && !(status === 'RUNNING' && isTerminal(applied.status))) {
      try {
        await events(applied);
      } catch (error) {
        // The sink is best-effort already; an error here must still not fail a written status.
        logger.error('operation status event failed', { eventId: event.id, error: error instanceof Error ? error.message : String(error) });
      }
    }
  };
  return async (event, context) => {
    try {
      await withRequestContext(context?.awsRequestId ? { function_request_id: context.awsRequestId } : {}, () => sync(event));
    } finally {
      metrics.flush();
    }
  };
}

/** One event, read: the execution as it stands, its name, and when its status changed. */
interface StatusChange {
  executionArn: string;
  name: string;
  /** The status the event reports. */
  status: string;
  snapshot: ExecutionSnapshot;
  changedAt?: number;
}

async function stateMachineChange(event: ExecutionStatusChangeEvent, engine: WorkflowEngine): Promise<StatusChange> {
  const { detail } = event;
  let snapshot = snapshotOf(detail);
  // EventBridge leaves out input and output over 256 KB; the execution still has them.
  const truncated =
    detail.inputDetails?.included === false || (detail.status === 'SUCCEEDED' && detail.outputDetails?.included === false) || detail.input == null;
  if (truncated) snapshot = await engine.describe(detail.executionArn);
  const exact = detail.status === 'RUNNING' ? detail.startDate : detail.stopDate;
  return { executionArn: detail.executionArn, name: executionNameOf(detail), status: detail.status, snapshot, ...(exact == null ? {} : { changedAt: exact }) };
}

/**
 * A durable execution's event holds no input, result or error, so the execution is read
 * (GetDurableExecution): its input names the record, its result settles it. When the two
 * differ (a RUNNING event delivered after the end), the read is the newer truth.
 */
async function durableChange(event: DurableStatusChangeEvent, engine: WorkflowEngine): Promise<StatusChange> {
  const { detail } = event;
  const snapshot = await engine.describe(detail.durableExecutionArn);
  const name = detail.durableExecutionName ?? durableExecutionNameOf(detail.durableExecutionArn) ?? detail.durableExecutionArn;
  const exact = Date.parse((detail.status === 'RUNNING' ? detail.startTimestamp : detail.endTimestamp) ?? '');
  return { executionArn: detail.durableExecutionArn, name, status: detail.status, snapshot, ...(Number.isNaN(exact) ? {} : { changedAt: exact }) };
}

/** When the event was emitted, for an event that does not say when the status changed. */
function emittedAt(event: StatusChangeEvent): number | undefined {
  const emitted = event.time === undefined ? Number.NaN : Date.parse(event.time);
  return Number.isNaN(emitted) ? undefined : emitted;
}

function snapshotOf(detail: ExecutionStatusChangeEvent['detail']): ExecutionSnapshot {
  return {
    executionArn: detail.executionArn,
    status: detail.status as ExecutionStatus,
    ...(detail.output != null ? { output: parseJsonOrText(detail.output) } : {}),
    ...(detail.error != null ? { error: detail.error } : {}),
    ...(detail.cause != null ? { cause: detail.cause } : {}),
    ...(detail.startDate != null ? { startDate: new Date(detail.startDate) } : {}),
    ...(detail.stopDate != null ? { stopDate: new Date(detail.stopDate) } : {}),
    ...(detail.input != null ? { input: parseJsonOrText(detail.input) } : {}),
  };
}

/** Executions carry `{ operation: { token, ownerId } }` in their input (DESIGN §3). */
function operationKeyOf(input: unknown): { ownerId: string; token: string } | undefined {
  const operation = (input as { operation?: { token?: unknown; ownerId?: unknown } } | undefined)?.operation;
  if (typeof operation?.token === 'string' && typeof operation.ownerId === 'string') {
    return { ownerId: operation.ownerId, token: operation.token };
  }
  return undefined;
}

/** The execution's name: the event's `name`, else the last part of its ARN. */
function executionNameOf(detail: ExecutionStatusChangeEvent['detail']): string {
  return detail.name ?? detail.executionArn.slice(detail.executionArn.lastIndexOf(':') + 1);
}
