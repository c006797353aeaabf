/**
 * Tool calls a client waits on: an EXPRESS tool through StartSyncExecution, a STANDARD one
 * as a tracked operation the caller waits for within its sync bound (stopped past it, or
 * handed off to a client that can come back later).
 */
import type { Logger } from '../logging/logger.ts';
import { checkExecutionInput, checkId, executionInputOf } from './execution-input.ts';
import { outcomeOf } from './execution-outcome.ts';
import { mintId } from './fingerprint.ts';
import { isTerminal, type Dialect, type OperationKey, type OperationRecord, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import type { OperationsLimits, StartOperationInput } from './operations-service.ts';
import type { RecordStore, WorkflowEngine } from './ports.ts';
import type { ToolSpec } from './tool-spec.ts';

export interface SyncRunInput {
  ownerId: string;
  tool: ToolSpec;
  arguments: Record<string, unknown>;
  requestId?: string;
}

/** How a run that may be handed off ended: its outcome, or the operation still running at the bound. */
export type SyncOrHandOff = { kind: 'finished'; outcome: Outcome } | { kind: 'handed-off'; record: OperationRecord };


/** What synchronous runs need from the operations core. */
export interface SyncRunDeps {
  store: RecordStore;
  engine: WorkflowEngine;
  limits: OperationsLimits;
  logger: Logger;
  start(input: StartOperationInput): Promise<OperationRecord>;
  waitForTerminal(key: OperationKey, boundMs: number): Promise<OperationRecord>;
  cancel(key: OperationKey, reason: string): Promise<OperationRecord>;
  mintToken(): string;
}

export class SyncRuns {
  constructor(private readonly deps: SyncRunDeps) {}

  /** Runs a tool to completion within its sync bound and returns how it ended. */
  async runSync(input: SyncRunInput): Promise<Outcome> {
    const { tool } = input;
    const boundSeconds = Math.min(tool.timing.syncTimeoutSeconds, this.deps.limits.maxBlockingSeconds);
    if (tool.workflowType === 'EXPRESS') return this.runExpress(input, boundSeconds);
    // STANDARD: a tracked operation the caller waits on, so it can still be cancelled by request id.
    const record = await this.deps.start({
      ownerId: input.ownerId,
      tool,
      arguments: input.arguments,
      token: `sync-${mintId()}`,
      dialect: 'sync',
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
    });
    let done = await this.deps.waitForTerminal(record, boundSeconds * 1000);
    if (!isTerminal(done.status)) {
      done = await this.deps.cancel(done, `Synchronous call exceeded ${boundSeconds} s`);
      if (done.status === 'canceled') {
        return {
          kind: 'tool-error',
          error: 'SyncTimeout',
          cause: `${tool.name} did not finish within ${boundSeconds} seconds and was stopped. Call it from a client that supports long-running operations to let it run longer.`,
        };
      }
    }
    if (done.status === 'canceled') return { kind: 'tool-error', error: 'Canceled', cause: 'The operation was canceled' };
    return done.outcome ?? { kind: 'internal-error', message: 'The operation ended without an outcome' };
  }

  /**
   * `runSync` for a client that can come back later: a STANDARD run still going at the
   * bound is left running and its record returned, instead of being stopped. The run is
   * an operation of `dialect` from the start, so the handed-off record is already the
   * caller's to poll. EXPRESS runs cannot be handed off (StartSyncExecution leaves
   * nothing to come back to) and end exactly as in `runSync`.
   */
  async runSyncOrHandOff(input: SyncRunInput & { dialect: Dialect }): Promise<SyncOrHandOff> {
    const { tool } = input;
    const boundSeconds = Math.min(tool.timing.syncTimeoutSeconds, this.deps.limits.maxBlockingSeconds);
    if (tool.workflowType === 'EXPRESS') return { kind: 'finished', outcome: await this.runExpress(input, boundSeconds) };
    const record = await this.deps.start({
      ownerId: input.ownerId,
      tool,
      arguments: input.arguments,
      token: this.deps.mintToken(),
      dialect: input.dialect,
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
    });
    const done = await this.deps.waitForTerminal(record, boundSeconds * 1000);
    if (!isTerminal(done.status)) return { kind: 'handed-off', record: done };
    if (done.status === 'canceled') return { kind: 'finished', outcome: { kind: 'tool-error', error: 'Canceled', cause: 'The operation was canceled' } };
    return { kind: 'finished', outcome: done.outcome ?? { kind: 'internal-error', message: 'The operation ended without an outcome' } };
  }

  /**
   * EXPRESS runs go through StartSyncExecution, which cannot be stopped: past the bound
   * the caller gets a tool error at once (so the Lambda never times out mid-answer) and
   * the execution ends at its own TimeoutSeconds. It cannot be cancelled, so it takes
   * its request id away from any older operation.
   */
  private async runExpress(input: SyncRunInput, boundSeconds: number): Promise<Outcome> {
    const { tool } = input;
    if (input.requestId !== undefined) checkId('request id', input.requestId);
    const executionInput = executionInputOf(input.ownerId, null, tool, input.arguments);
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
    const timer = setTimeout(() => abort.abort(), boundSeconds * 1000);
    try {
      const [snapshot] = await Promise.all([
        this.deps.engine.startSync({ stateMachineArn: tool.stateMachineArn, name: `sync-${mintId()}`, input: executionInput }, abort.signal),
        forget,
      ]);
      return outcomeOf(snapshot) ?? { kind: 'tool-error', error: 'States.Aborted', cause: 'The execution was stopped' };
    } catch (error) {
      if (abort.signal.aborted) {
        return { kind: 'tool-error', error: 'SyncTimeout', cause: `${tool.name} did not finish within ${boundSeconds} seconds.` };
      }
      throw new OperationError('INTERNAL', 'The workflow engine did not run the tool', { cause: error });
    } finally {
      clearTimeout(timer);
    }
  }
}
