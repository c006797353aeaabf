/**
 * One durable execution, driven as the Lambda service drives it: the handler is invoked with
 * the operations checkpointed so far (replay), returns PENDING while it waits, and is invoked
 * again when a wait's timer fires, a step's retry is due or a callback is answered. The
 * operations themselves live in the checkpoint worker; this module owns the timers and the
 * invocations, one at a time per execution, and the journal that rebuilds the worker's
 * operations after a restart (`checkpoint-journal.ts`).
 */
import { randomUUID } from 'node:crypto';
import type { ErrorObject, Operation, OperationUpdate } from '@aws/durable-execution-sdk-js';
import { asFirstGiven, callbackIdParts, currentCallbackIds, type JournaledApi, type JournalEntry, operationKey, replayJournal } from './checkpoint-journal.ts';
import { callbackTimeoutEntries, type PolledOperation } from './callback-timeouts.ts';
import type { CheckpointWorkerClient } from './checkpoint-worker-client.ts';
import type { RunStatus, StoredExecution } from './execution-store.ts';
import { errorObjectOf, type InvokedFunction, invokeHandler } from './handler-invocation.ts';
import { OPERATION_SPANS } from '../../lambdas/observability/span-names.ts';
import { operationToolOf, withExecutionSpan } from '../../lambdas/observability/traced-invocation.ts';
import { bindToActiveContext, currentCarrier, SpanKind, withSpan } from '../../lambdas/observability/tracing.ts';
import { RunTimers } from './run-timers.ts';
import { StepSpans } from './step-spans.ts';

export type { RunStatus } from './execution-store.ts';

interface InvocationStart {
  checkpointToken: string;
  executionId: string;
  invocationId: string;
  operationEvents: { operation: Operation }[];
  updatedOperationIds: string[];
}

/** What a run needs from its service: the backend, and the function it invokes. */
export interface DurableRunParts extends InvokedFunction {
  worker: CheckpointWorkerClient;
  /** Called after every change worth saving (journal, operations, status). */
  changed(): void;
  /** Called once the execution has started, and once it has ended. */
  statusChanged(): void;
}

/** What a restored run takes over from its saved record. */
export type SavedRun = Pick<StoredExecution, 'status' | 'result' | 'error' | 'endTimestamp' | 'journal' | 'operations'>;

/** A running or finished execution. */
export class DurableRun {
  status: RunStatus = 'RUNNING';
  result: string | undefined;
  error: ErrorObject | undefined;
  endTimestamp: Date | undefined;
  /** The worker calls that changed this execution's operations, in the order applied. */
  readonly journal: JournalEntry[] = [];
  /** The operations as first given out, by {@link operationKey}. */
  readonly operations = new Map<string, Operation>();
  private executionOperationId = '';
  /** Whether the worker holds this execution: not so for one that ended before a restart. */
  private live = false;
  /** The id the worker holds for each callback operation, which a replay changes. */
  private workerCallbackIds = new Map<string, string>();
  /** A rebuilt execution's operations, for {@link proceed} to arm timers from. */
  private resumedOperations: Operation[] = [];
  private readonly timers = new RunTimers();
  private readonly steps = new StepSpans();
  private invoking = false;
  private halted = false;
  /** The handler invocations under way, which a halt waits for. */
  private readonly invocations = new Set<Promise<void>>();
  private invokeAgain = false;
  private readonly finished: Promise<void>;
  private markFinished: () => void = () => {};

  constructor(
    private readonly parts: DurableRunParts,
    readonly arn: string,
    /** The id the checkpoint worker knows this execution by; callback ids embed it. */
    readonly workerExecutionId: string,
    saved?: SavedRun,
  ) {
    this.finished = new Promise((resolve) => {
      this.markFinished = resolve;
    });
    if (!saved) return;
    this.journal.push(...saved.journal);
    for (const [key, operation] of Object.entries(saved.operations)) this.operations.set(key, operation);
    Object.assign(this, { status: saved.status, result: saved.result, error: saved.error, endTimestamp: saved.endTimestamp });
    if (this.status !== 'RUNNING') this.markFinished();
  }

  /** Resolves when the execution has ended, however it ended. */
  whenFinished(): Promise<void> {
    return this.finished;
  }

  /** Starts the execution in the worker and its first invocation; resolves once it is started. */
  async start(payload: string | undefined): Promise<void> {
    const first = await this.startInWorker(payload);
    for (const { operation } of first.operationEvents) this.record(operation);
    this.parts.changed();
    this.parts.statusChanged();
    // The execution's span, in the operation's trace the payload carries; every invocation,
    // whoever triggers it (a timer, a callback's answer), is its child.
    const input = parsedPayload(payload);
    withExecutionSpan(
      operationToolOf(input) ?? this.parts.functionName,
      input,
      () => {
        this.invokeInTrace = bindToActiveContext((start?: InvocationStart) => this.invokeOnce(start));
        void this.pollUpdates();
        void this.invoke(first);
      },
      () => this.finished.then(() => this.status),
    );
  }

  /**
   * Takes up a saved RUNNING execution after a restart, in two halves so that no handler runs
   * before every execution is rebuilt: this one gives the worker the execution again under the
   * same id, rebuilt from the journal; {@link proceed} goes on with it.
   */
  async rebuild(payload: string | undefined): Promise<void> {
    try {
      await this.startInWorker(payload);
      await replayJournal(this.parts.worker, this.workerExecutionId, this.journal);
      // The replay's updates are old news: drained here, not acted on.
      if (this.journal.length > 0) await this.parts.worker.call('PollCheckpointData', { executionId: this.workerExecutionId });
      const state = await this.parts.worker.call<{ Operations: Operation[] }>('GetDurableExecutionState', { DurableExecutionArn: this.workerExecutionId });
      this.workerCallbackIds = currentCallbackIds(state);
      this.resumedOperations = state.Operations.map((raw) => this.given(raw));
    } catch (error) {
      this.failInternally(error);
    }
  }

  /**
   * Goes on with a rebuilt execution: the timers of its waits and retries are armed at the
   * times first given, and the handler is invoked to replay its checkpoints, as Lambda
   * re-invokes after an invocation that did not return.
   */
  proceed(): void {
    if (!this.active) return;
    for (const operation of this.resumedOperations) {
      const id = operation.Id ?? '';
      if (operation.Type === 'WAIT' && operation.Status === 'STARTED') {
        this.at(operation.WaitDetails?.ScheduledEndTimestamp, () => this.complete(id, 'SUCCEEDED'));
      } else if (operation.Type === 'STEP' && operation.Status === 'PENDING') {
        this.at(operation.StepDetails?.NextAttemptTimestamp, () => this.complete(id, 'READY'));
      }
    }
    this.resumedOperations = [];
    void this.pollUpdates();
    void this.invoke();
  }

  /** CheckpointDurableExecution from the handler: journaled once the worker has applied it. */
  async checkpoint(input: { CheckpointToken?: string; Updates?: OperationUpdate[]; ClientToken?: string }) {
    this.steps.checkpointed(input.Updates);
    const params = { ...input, DurableExecutionArn: this.workerExecutionId };
    const output = await this.parts.worker.call<{ CheckpointToken: string; NewExecutionState: { Operations: Operation[] } }>(
      'CheckpointDurableExecutionState',
      params,
      () => {
        // A checkpoint without updates only renews the token: nothing to replay.
        if (input.Updates?.length) this.journaled('CheckpointDurableExecutionState', params);
      },
    );
    return { ...output, NewExecutionState: { ...output.NewExecutionState, Operations: output.NewExecutionState.Operations.map((raw) => this.given(raw)) } };
  }

  /** The operations, as GetDurableExecutionState gives them. */
  async state(): Promise<{ Operations: Operation[] }> {
    if (!this.live) return { Operations: [...this.operations.values()] };
    const state = await this.parts.worker.call<{ Operations: Operation[] }>('GetDurableExecutionState', { DurableExecutionArn: this.workerExecutionId });
    return { Operations: state.Operations.map((raw) => this.given(raw)) };
  }

  /** SendDurableExecutionCallbackSuccess, Failure or Heartbeat, under the id the worker holds now. */
  async answerCallback(callbackId: string, outcome: { succeed: Uint8Array } | { fail: ErrorObject } | 'heartbeat'): Promise<void> {
    const operationId = callbackIdParts(callbackId)?.operationId ?? '';
    const CallbackId = this.workerCallbackIds.get(operationId) ?? callbackId;
    if (outcome === 'heartbeat') {
      await this.parts.worker.call('SendDurableExecutionCallbackHeartbeat', { CallbackId });
    } else if ('succeed' in outcome) {
      const params = { CallbackId, Result: outcome.succeed };
      await this.parts.worker.call('SendDurableExecutionCallbackSuccess', params, () => this.journaled('SendDurableExecutionCallbackSuccess', params));
    } else {
      const params = { CallbackId, Error: outcome.fail };
      await this.parts.worker.call('SendDurableExecutionCallbackFailure', params, () => this.journaled('SendDurableExecutionCallbackFailure', params));
    }
  }

  private async startInWorker(payload: string | undefined): Promise<InvocationStart> {
    const first = await this.parts.worker.call<InvocationStart>('StartDurableExecution', {
      payload,
      invocationId: randomUUID(),
      // The worker takes an execution id it is given: a restarted execution keeps its own.
      executionId: this.workerExecutionId,
    });
    this.executionOperationId = first.operationEvents[0]?.operation.Id ?? '';
    this.live = true;
    return first;
  }

  /** Saves where a failure to save can only be reported: the change has happened already. */
  private saveOrLog(): void {
    try {
      this.parts.changed();
    } catch (error) {
      console.error(JSON.stringify({ level: 'error', message: 'local durable execution not saved', arn: this.arn, error: String(error) }));
    }
  }

  private journaled(api: JournaledApi, params: object): void {
    this.journal.push({ api, params: params as Record<string, unknown> });
    this.parts.changed();
  }

  /** Keeps `operation` as first given out, and the callback id the worker holds for it. */
  private record(operation: Operation): void {
    const key = operationKey(operation);
    this.operations.set(key, asFirstGiven(operation, this.operations.get(key)));
    if (operation.Type === 'CALLBACK' && operation.Id && operation.CallbackDetails?.CallbackId) {
      this.workerCallbackIds.set(operation.Id, operation.CallbackDetails.CallbackId);
    }
  }

  /** A worker's operation as the SDK and the API get it: with the values first given out. */
  private given(operation: Operation): Operation {
    return asFirstGiven(operation, this.operations.get(operationKey(operation)));
  }

  /** Cancels this run's timers as the service closes (the execution stays as it was); settles once the invocation under way returns. */
  halt(): Promise<void> {
    this.halted = true;
    this.timers.clear();
    return Promise.all([...this.invocations]).then(() => undefined);
  }

  /** Running here: a halted run changes nothing, so its saved record stays as it was. */
  private get active(): boolean {
    return this.status === 'RUNNING' && !this.halted;
  }

  /** Ends a running execution as STOPPED: no timer fires and no invocation starts after it. */
  stop(error: ErrorObject | undefined): Date {
    this.finish('STOPPED', undefined, error);
    return this.endTimestamp ?? new Date();
  }

  private async pollUpdates(): Promise<void> {
    while (this.active) {
      let polled: { operations: PolledOperation[] };
      try {
        polled = await this.parts.worker.call('PollCheckpointData', { executionId: this.workerExecutionId }, (reply: { operations: PolledOperation[] }) => {
          // Saved with the poll's operations, after this reply.
          this.journal.push(...callbackTimeoutEntries(reply.operations, this.operations, this.workerExecutionId));
        });
      } catch (error) {
        this.failInternally(error);
        return;
      }
      for (const { operation } of polled.operations) this.record(operation);
      this.saveOrLog();
      for (const { operation, update } of polled.operations) this.react(this.given(operation), update);
    }
  }

  /** What the service does after a checkpoint: arm a timer, or invoke again. */
  private react(operation: Operation, update: OperationUpdate | undefined): void {
    if (!this.active || !operation.Id) return;
    const id = operation.Id;
    if (operation.Type === 'WAIT' && update?.Action === 'START') {
      const end = operation.WaitDetails?.ScheduledEndTimestamp;
      this.at(end, () => this.complete(id, 'SUCCEEDED'));
    } else if (operation.Type === 'STEP' && update?.Action === 'RETRY') {
      this.at(operation.StepDetails?.NextAttemptTimestamp, () => this.complete(id, 'READY'));
    } else if (operation.Type === 'CALLBACK' && operation.Status !== 'STARTED') {
      void this.invoke();
    } else if (operation.Type === 'EXECUTION' && update) {
      // The SDK checkpoints the execution's end itself when the result is too large to return.
      if (update.Action === 'SUCCEED') this.finish('SUCCEEDED', update.Payload, undefined);
      if (update.Action === 'FAIL') this.finish('FAILED', undefined, update.Error);
    }
  }

  /** At `when`, `then` changes an operation in the worker, and the handler is invoked to go on. */
  private at(when: Date | undefined, then: () => Promise<void>): void {
    this.timers.at(when, () => {
      if (!this.active) return;
      then().then(
        () => this.invoke(),
        (error: unknown) => this.failInternally(error),
      );
    });
  }

  private complete(operationId: string, status: 'SUCCEEDED' | 'READY'): Promise<void> {
    const params = { executionId: this.workerExecutionId, operationId, operationData: { Status: status } };
    return this.parts.worker.call('UpdateCheckpointData', params, () => this.journaled('UpdateCheckpointData', params));
  }

  /** Invokes the handler, or, while an invocation runs, invokes again once it returns. */
  private invoke(first?: InvocationStart): Promise<void> {
    const invocation = this.invokeInTrace(first);
    this.invocations.add(invocation);
    const settled = () => this.invocations.delete(invocation);
    invocation.then(settled, settled);
    return invocation;
  }

  private invokeInTrace: (first?: InvocationStart) => Promise<void> = (first) => this.invokeOnce(first);

  private async invokeOnce(first?: InvocationStart): Promise<void> {
    if (!this.active) return;
    if (this.invoking) {
      this.invokeAgain = true;
      return;
    }
    this.invoking = true;
    try {
      const invocation =
        first ??
        (await this.parts.worker.call<InvocationStart>('StartInvocation', {
          executionId: this.workerExecutionId,
          invocationId: randomUUID(),
        }));
      const output = await withSpan(
        OPERATION_SPANS.worker(this.parts.functionName),
        { kind: SpanKind.SERVER, attributes: { 'faas.invoked_name': this.parts.functionName } },
        () => {
          this.steps.invocation = currentCarrier();
          return invokeHandler(this.parts, {
            durableExecutionArn: this.arn,
            checkpointToken: invocation.checkpointToken,
            operations: invocation.operationEvents.map((event) => this.given(event.operation)),
            updatedOperationIds: invocation.updatedOperationIds,
          });
        },
      );
      const completed = await this.parts.worker.call<{ hasDirtyOperations: boolean }>('CompleteInvocation', {
        executionId: this.workerExecutionId,
        invocationId: invocation.invocationId,
        error: output.Status === 'FAILED' ? output.Error : undefined,
      });
      if (output.Status === 'SUCCEEDED') this.finish('SUCCEEDED', output.Result, undefined);
      else if (output.Status === 'FAILED') this.finish('FAILED', undefined, output.Error);
      else if (completed.hasDirtyOperations) this.invokeAgain = true;
    } catch (error) {
      this.failInternally(error);
    } finally {
      this.invoking = false;
    }
    if (this.invokeAgain && this.active) {
      this.invokeAgain = false;
      await this.invoke();
    }
  }

  private finish(status: Exclude<RunStatus, 'RUNNING'>, result: string | undefined, error: ErrorObject | undefined) {
    if (!this.active) return;
    this.status = status;
    this.result = result;
    this.error = error;
    this.endTimestamp = new Date();
    this.timers.clear();
    this.markFinished();
    this.saveOrLog();
    this.parts.statusChanged();
    // Closes the execution in the worker too, so it refuses later invocations; a failure here
    // changes nothing the caller sees, since the status above is the service's own record.
    this.parts.worker
      .call('UpdateCheckpointData', {
        executionId: this.workerExecutionId,
        operationId: this.executionOperationId,
        operationData: { Status: status === 'SUCCEEDED' ? 'SUCCEEDED' : status === 'STOPPED' ? 'STOPPED' : 'FAILED' },
        payload: result,
        error,
      })
      .catch((closeError: unknown) => {
        console.error(
          JSON.stringify({ level: 'warn', message: 'durable execution not closed in the checkpoint worker', arn: this.arn, error: String(closeError) }),
        );
      });
  }

  private failInternally(error: unknown): void {
    if (!this.active) return;
    console.error(JSON.stringify({ level: 'error', message: 'local durable execution failed internally', arn: this.arn, error: String(error) }));
    this.finish('FAILED', undefined, { ErrorType: 'Local.ServiceError', ErrorMessage: errorObjectOf(error).ErrorMessage });
  }
}

/** The execution's input as JSON, or `undefined` (its trace is then unknown). */
function parsedPayload(payload: string | undefined): unknown {
  try {
    return payload === undefined ? undefined : JSON.parse(payload);
  } catch {
    return undefined;
  }
}
