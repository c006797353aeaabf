/**
 * Tool calls a client waits on: an EXPRESS tool through StartSyncExecution, a STANDARD one
 * as a tracked operation the caller waits for within its sync bound (stopped past it, or
 * handed off to a client that can come back later).
 */
import { currentCarrier } from '../observability/tracing.ts';
import { checkExecutionInput, checkId, executionInputOf, withExecutionTrace } from './execution-input.ts';
import { outcomeOf, runningExpiry } from './execution-outcome.ts';
import { mintId } from './fingerprint.ts';
import type { InputProtocol } from './input-protocol.ts';
import { isTerminal, type Dialect, type OperationKey, type OperationRecord, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { REQUEST_MARGIN_SECONDS, type OperationsLimits } from './operations-limits.ts';
import type { Logger, RecordStore, WorkflowEngine } from './ports.ts';
import type { OperationReads } from './operation-reads.ts';
import type { Settlement } from './settlement.ts';
import type { Starts } from './starts.ts';
import type { ToolSpec } from './tool-spec.ts';

export interface SyncRunInput {
  ownerId: string;
  tool: ToolSpec;
  arguments: Record<string, unknown>;
  requestId?: string;
  /** What the client declared it can answer, should the execution ask (see input-protocol.ts). */
  clientCapabilities?: Record<string, unknown>;
  /**
   * The request's: once it aborts (the client went away), the run is no longer waited on and
   * a round hands its operation off, still running. Only the wait ends, never the run:
   * "Disconnection SHOULD NOT be interpreted as the client cancelling its request" (Streamable HTTP).
   */
  signal?: AbortSignal;
}

/** How a run that may be handed off ended: its outcome, or the operation still running at the bound. */
export type SyncOrHandOff = { kind: 'finished'; outcome: Outcome } | { kind: 'handed-off'; record: OperationRecord };

/** One round of a call the client waits on. */
export interface SyncStepInput extends SyncRunInput {
  /** The dialect the operation belongs to: `sync`, or one the client can poll if it is handed off. */
  dialect: Dialect;
  /** An operation an earlier round of this call started (a retry with answers): waited on, not started. */
  resume?: OperationKey;
  /** At the bound: stop the execution (a client that cannot come back) or hand the running operation off. */
  atBound: 'stop' | 'hand-off';
  /**
   * When the execution asks a question: `return` ends the round with the record (the client
   * answers in a retry); `wait` calls `onInput` and waits on (the client answers on its own).
   */
  onQuestion: 'return' | 'wait';
  /** Called with the record each time questions are pending that it has not been shown (`wait` only). */
  onInput?: (record: OperationRecord) => Promise<void>;
  /** This round's bound in seconds, instead of the tool's `syncTimeoutSeconds` (still capped by the server's). */
  boundSeconds?: number;
  /**
   * The request's deadline (epoch ms), shared by every round one request runs: a round that
   * starts later gets what is left of the bound, never a fresh one. Absent: now + the bound.
   */
  deadline?: number;
  /** Called with every record the wait reads (a caller streaming the run's reports sends them from it). */
  onRecord?: (record: OperationRecord) => Promise<void>;
}

/** How a round ended: finished, stopped at a question, or handed off (at the bound, or its request ended first). */
export type SyncStep =
  | { kind: 'finished'; outcome: Outcome; record?: OperationRecord }
  | { kind: 'input-required'; record: OperationRecord }
  | { kind: 'handed-off'; record: OperationRecord };

/** How long a synchronous call's record outlives its execution: the call reads it within a poll (a second or less). */
export const SYNC_RECORD_KEEP_SECONDS = 60;

/** What synchronous runs need from the other parts of the core. */
export interface SyncRunDeps {
  store: RecordStore;
  engine: WorkflowEngine;
  limits: OperationsLimits;
  logger: Logger;
  /** Which of a client's declared capabilities an execution is shown. */
  protocol: Pick<InputProtocol, 'capabilitiesOf'>;
  starts: Pick<Starts, 'start'>;
  reads: Pick<OperationReads, 'waitFor'>;
  settlement: Pick<Settlement, 'cancel'>;
}

export class SyncRuns {
  constructor(private readonly deps: SyncRunDeps) {}

  /** Runs a tool to completion within its sync bound and returns how it ended. */
  async runSync(input: SyncRunInput): Promise<Outcome> {
    const step = await this.runSyncStep({ ...input, dialect: 'sync', atBound: 'stop', onQuestion: 'wait' });
    if (step.kind !== 'finished') return { kind: 'internal-error', message: 'The synchronous call did not finish' };
    return step.outcome;
  }

  /**
   * `runSync` for a client that can come back later: a STANDARD run still going at the
   * bound is left running and its record returned, instead of being stopped. The run is
   * an operation of `dialect` from the start, so the handed-off record is already the
   * caller's to poll. EXPRESS runs cannot be handed off (StartSyncExecution leaves
   * nothing to come back to) and end exactly as in `runSync`.
   */
  async runSyncOrHandOff(input: SyncRunInput & { dialect: Dialect }): Promise<SyncOrHandOff> {
    const step = await this.runSyncStep({ ...input, atBound: 'hand-off', onQuestion: 'return' });
    if (step.kind === 'input-required') return { kind: 'handed-off', record: step.record };
    return step.kind === 'finished' ? { kind: 'finished', outcome: step.outcome } : step;
  }

  /**
   * One round of a call the client waits on. A STANDARD run is a tracked operation (so it
   * can be cancelled by request id, and answer questions); an EXPRESS one cannot ask any
   * (Step Functions has no `.waitForTaskToken` in EXPRESS workflows).
   */
  async runSyncStep(input: SyncStepInput): Promise<SyncStep> {
    const { tool } = input;
    const boundSeconds = this.boundSecondsOf(input);
    const deadline = Math.min(input.deadline ?? Infinity, Date.now() + boundSeconds * 1000);
    if (tool.workflowType === 'EXPRESS') return { kind: 'finished', outcome: await this.runExpress(input, boundSeconds, deadline) };
    const record =
      input.resume ??
      (await this.deps.starts.start({
        ownerId: input.ownerId,
        tool,
        arguments: input.arguments,
        token: input.dialect === 'sync' ? `sync-${mintId()}` : mintId(),
        dialect: input.dialect,
        // No client can ever ask for a synchronous call's record: kept only until the call has read it.
        ...(input.dialect === 'sync' ? { keepAliveSeconds: SYNC_RECORD_KEEP_SECONDS } : {}),
        ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
        ...(input.clientCapabilities === undefined ? {} : { clientCapabilities: input.clientCapabilities }),
      }));
    const shown = new Set<string>();
    const unshown = (r: OperationRecord) => Object.keys(openQuestions(r)).some((key) => !shown.has(key));
    let done: OperationRecord;
    for (;;) {
      done = await this.deps.reads.waitFor(record, Math.max(0, deadline - Date.now()), unshown, input.onRecord, input.signal);
      if (input.signal?.aborted && !isTerminal(done.status)) return { kind: 'handed-off', record: done };
      if (isTerminal(done.status) || !unshown(done)) break;
      if (input.onQuestion === 'return') return { kind: 'input-required', record: done };
      for (const key of Object.keys(openQuestions(done))) shown.add(key);
      await input.onInput?.(done);
    }
    if (!isTerminal(done.status)) {
      if (input.atBound === 'hand-off') return { kind: 'handed-off', record: done };
      done = await this.deps.settlement.cancel(done, `Synchronous call exceeded ${boundSeconds} s`);
      if (done.status === 'canceled') {
        return {
          kind: 'finished',
          record: done,
          outcome: {
            kind: 'tool-error',
            error: 'SyncTimeout',
            cause: `${tool.name} did not finish within ${boundSeconds} seconds and was stopped. Call it from a client that supports long-running operations to let it run longer.`,
          },
        };
      }
    }
    if (done.status === 'canceled')
      return { kind: 'finished', record: done, outcome: { kind: 'tool-error', error: 'Canceled', cause: 'The operation was canceled' } };
    return { kind: 'finished', record: done, outcome: done.outcome ?? { kind: 'internal-error', message: 'The operation ended without an outcome' } };
  }

  /**
   * A waited-on call's round ended at questions, and only a retry that presents the state
   * handed out with them (valid for `ttlSeconds`) can go on with its operation: returns that
   * state's expiry (epoch seconds), within the operation's longest life. A `sync` record,
   * which no client reads otherwise, then expires with the state (plus one round, so a
   * retry accepted just before can finish): an unanswered round is abandoned, and whatever
   * next touches its record (slot repair at the limit, the late retry) stops its execution.
   */
  async holdForRetry(record: OperationRecord, tool: ToolSpec, ttlSeconds: number, nowMs = Date.now()): Promise<number> {
    const longest = runningExpiry(record.createdAt, tool.timing.maxRunSeconds, record.keepAliveSeconds ?? this.deps.limits.maxKeepAliveSeconds);
    const stateExpiry = Math.min(Math.floor(nowMs / 1000) + ttlSeconds, longest);
    if (record.dialect !== 'sync') return Math.min(stateExpiry, record.expiresAt ?? Infinity);
    const recordExpiry = Math.min(stateExpiry + this.deps.limits.maxBlockingSeconds + REQUEST_MARGIN_SECONDS, longest);
    await this.deps.store.transition(record, ['submitted', 'working', 'input_required'], { expiresAt: recordExpiry });
    return stateExpiry;
  }

  /** The bound of a round in seconds: its own, or the tool's sync timeout, capped by the server's blocking bound. */
  boundSecondsOf(input: Pick<SyncStepInput, 'tool' | 'boundSeconds'>): number {
    return Math.min(input.boundSeconds ?? input.tool.timing.syncTimeoutSeconds, this.deps.limits.maxBlockingSeconds);
  }

  /**
   * EXPRESS runs go through StartSyncExecution, which cannot be stopped: past the bound
   * the caller gets a tool error at once (so the Lambda never times out mid-answer) and
   * the execution ends at its own TimeoutSeconds. It cannot be cancelled, so it takes
   * its request id away from any older operation.
   */
  private async runExpress(input: SyncRunInput, boundSeconds: number, deadline: number): Promise<Outcome> {
    const { tool } = input;
    if (input.requestId !== undefined) checkId('request id', input.requestId);
    // No record to keep it: the request's span context goes in the input, so the run joins the request's trace.
    const executionInput = withExecutionTrace(
      executionInputOf(input.ownerId, null, tool, input.arguments, this.deps.protocol.capabilitiesOf(input.clientCapabilities ?? {})),
      currentCarrier(),
    );
    checkExecutionInput(executionInput);
    // Forgetting the id runs beside the run, so it adds no latency; its failure fails no call.
    const forget =
      input.requestId === undefined
        ? Promise.resolve()
        : this.deps.store.deleteRequestAlias(input.ownerId, input.requestId).catch((error: unknown) => {
            this.deps.logger.warn('request id not forgotten: a cancel by that id may reach an older operation', {
              error: error instanceof Error ? error.name : String(error),
            });
          });
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), Math.max(0, deadline - Date.now()));
    // The client going away ends the wait for the answer too (the execution cannot be stopped either way).
    const signal = input.signal ? AbortSignal.any([abort.signal, input.signal]) : abort.signal;
    try {
      const [snapshot] = await Promise.all([
        this.deps.engine.startSync({ stateMachineArn: tool.stateMachineArn, name: `sync-${mintId()}`, input: executionInput }, signal),
        forget,
      ]);
      return outcomeOf(snapshot) ?? { kind: 'tool-error', error: 'States.Aborted', cause: 'The execution was stopped' };
    } catch (error) {
      if (abort.signal.aborted) {
        return { kind: 'tool-error', error: 'SyncTimeout', cause: `${tool.name} did not finish within ${boundSeconds} seconds.` };
      }
      // Nobody reads this: the request has ended.
      if (input.signal?.aborted) return { kind: 'tool-error', error: 'ClientGone', cause: `The client went away before ${tool.name} finished.` };
      throw new OperationError('INTERNAL', 'The workflow engine did not run the tool', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}

/** The questions pending on a record and not being answered (the status says whether any). */
function openQuestions(record: OperationRecord): Record<string, unknown> {
  if (record.status !== 'input_required') return {};
  return Object.fromEntries(Object.entries(record.pendingInputs ?? {}).filter(([, entry]) => entry.answeringSince === undefined));
}
