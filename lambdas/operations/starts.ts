/**
 * Starting operations: lifecycle steps 1-3 (the record, its active slot, StartExecution)
 * and the settlement of a start the engine refused.
 *
 * Crash safety of a start: the record (with its execution's derivable ARN) is written
 * before StartExecution, whose name is fixed by the record, so a retry never starts a
 * second execution and a cancel can always name the execution, started or not. A start
 * that crashed at any point is finished by a retry, by the RUNNING event, or by
 * reconciliation; none of them fails an execution that is running.
 */
import type { ActiveSlots } from './active-slots.ts';
import { currentCarrier } from '../observability/tracing.ts';
import { checkExecutionInput, checkId, executionInputOf, withExecutionTrace } from './execution-input.ts';
import { runningExpiry, statusMessageFor } from './execution-outcome.ts';
import { argumentsHash, executionNameFor } from './fingerprint.ts';
import { cancelableByRequestId, type OperationRecord, type Outcome } from './operation.ts';
import { OperationError } from './operation-error.ts';
import { assertLive, readLiveRecord } from './operation-reads.ts';
import type { OperationsContext } from './operations-options.ts';
import { ExecutionNotFoundError, type SlotAlias } from './ports.ts';
import type { Settlement } from './settlement.ts';
import type { StartOperationInput } from './start-operation-input.ts';
import type { ToolSpec } from './tool-spec.ts';

/** What a start needs of the settlement: ending the record of a start that failed, and stopping what came late. */
export type StartSettlement = Pick<Settlement, 'finishFailed' | 'stopQuietly'>;

export class Starts {
  constructor(
    private readonly context: OperationsContext,
    private readonly slots: ActiveSlots,
    private readonly settlement: StartSettlement,
  ) {}

  /** The keepAlive granted: the request clamped by the tool's and the server's maximum. */
  grantKeepAlive(tool: ToolSpec, requested: number | null | undefined): number | null {
    const { limits } = this.context;
    const toolMax = tool.timing.maxKeepAliveSeconds;
    const max = toolMax === null ? limits.maxKeepAliveSeconds : Math.min(toolMax, limits.maxKeepAliveSeconds);
    if (requested === null) {
      return limits.allowUnlimitedKeepAlive && toolMax === null ? null : max;
    }
    const wanted = requested ?? tool.timing.keepAliveSeconds;
    return Math.max(1, Math.min(Math.floor(wanted), max));
  }

  /**
   * Lifecycle steps 1-3: conditional create, claim an active slot, StartExecution with the
   * record's deterministic name. Two writes and one StartExecution: the record is
   * `working` from its creation (a start that never reached Step Functions is failed by
   * reconciliation once the stall window has passed). Idempotent per (owner, token,
   * tool, arguments). Everything a caller can get wrong is refused before any write.
   */
  async start(input: StartOperationInput): Promise<OperationRecord> {
    const { engine, clock, limits, input: protocol } = this.context;
    const { tool } = input;
    checkId('token', input.token);
    if (input.requestId !== undefined) checkId('request id', input.requestId);
    const capabilities = protocol.capabilitiesOf(input.clientCapabilities ?? {});
    // The request's span, when tracing is on: the operation's trace from here to its end (DESIGN §5b).
    const trace = currentCarrier();
    const executionInput = withExecutionTrace(executionInputOf(input.ownerId, input.token, tool, input.arguments, capabilities), trace);
    checkExecutionInput(executionInput);
    const inputKinds = protocol.kindsOf(capabilities);

    const now = clock.now();
    const hash = argumentsHash(tool.name, input.arguments);
    const keepAliveSeconds = this.grantKeepAlive(tool, input.keepAliveSeconds);
    const executionName = executionNameFor(input.ownerId, input.token, now);
    const draft: OperationRecord = {
      ownerId: input.ownerId,
      token: input.token,
      tool: tool.name,
      argumentsHash: hash,
      dialect: input.dialect,
      status: 'working',
      statusMessage: statusMessageFor('working'),
      executionName,
      // Derivable before the start, so a cancel racing the start can always stop it.
      executionArn: engine.executionArnFor(tool.stateMachineArn, executionName),
      createdAt: now,
      updatedAt: now,
      keepAliveSeconds,
      pollIntervalSeconds: tool.timing.pollIntervalSeconds,
      expiresAt: runningExpiry(now, tool.timing.maxRunSeconds, keepAliveSeconds ?? limits.maxKeepAliveSeconds),
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
      ...(inputKinds.length === 0 ? {} : { inputKinds }),
      // The result is checked against the tool as this execution runs it, whatever is deployed when it ends.
      resultContract: tool.outputSchema ? { outputSchema: tool.outputSchema } : {},
      ...(trace ? { trace } : {}),
    };
    // The record first, then its slot: a slot whose record is missing is then always a leak
    // (a crash, or an expired record), never a start still on its way.
    const created = await this.context.store.create(draft);
    if (!created.created) return this.resume(created.existing, input, hash, withExecutionTrace(executionInput, created.existing.trace));
    await this.claimSlot(created.record, tool, { discardOnRefusal: true, requestId: input.requestId });
    return this.launch(created.record, tool, executionInput);
  }

  /**
   * Takes the operation's active slot, and with it, in the same write, the request id's
   * alias when the call can be cancelled by id, or the end of an older call's alias under
   * that id when it cannot (no read to see whether there is one). At the limit the start is
   * refused; a record this very start created is taken back first, so a refused start leaves
   * nothing behind.
   */
  private async claimSlot(record: OperationRecord, tool: ToolSpec, options: { discardOnRefusal: boolean; requestId: string | undefined }): Promise<void> {
    const key = { ownerId: record.ownerId, token: record.token };
    const { requestId } = options;
    const alias: SlotAlias | undefined =
      requestId === undefined
        ? undefined
        : cancelableByRequestId(record.dialect)
          ? { requestId, expiresAt: this.aliasExpiry(record) }
          : { requestId, forget: true };
    if ((await this.slots.claim(key, alias)) !== 'refused') return;
    if (options.discardOnRefusal) await this.context.store.discard(key, ['working']);
    throw this.slots.limitExceeded(tool.timing.pollIntervalSeconds);
  }

  /** The same call again: the first attempt's answer, or the rest of its start if it crashed mid-way. */
  private async resume(record: OperationRecord, input: StartOperationInput, hash: string, executionInput: unknown): Promise<OperationRecord> {
    if (record.tool !== input.tool.name || record.argumentsHash !== hash || record.dialect !== input.dialect) {
      throw new OperationError('TOKEN_REUSED', 'The token was already used for a different tool call');
    }
    assertLive(record, this.context.clock.now());
    // Asking a question or ending proves the execution started; `working` does not, so the
    // rest of the start runs again. Both steps are idempotent: the slot is already held, or
    // taken now, and StartExecution of the same name and input starts nothing new.
    if (record.status !== 'working' && record.status !== 'submitted') {
      await this.rememberRequest(record, input.requestId);
      return record;
    }
    await this.claimSlot(record, input.tool, { discardOnRefusal: false, requestId: input.requestId });
    return this.launch(record, input.tool, executionInput);
  }

  /**
   * Which operation a JSON-RPC id names is the latest `tools/call` with that id: a call
   * that can be cancelled by id takes the alias, any other call takes it away.
   */
  private async rememberRequest(record: OperationRecord, requestId: string | undefined): Promise<void> {
    if (requestId === undefined) return;
    const { store } = this.context;
    if (cancelableByRequestId(record.dialect)) {
      await store.putRequestAlias(record.ownerId, requestId, { token: record.token, expiresAt: this.aliasExpiry(record) });
    } else {
      await store.deleteRequestAlias(record.ownerId, requestId);
    }
  }

  private async launch(record: OperationRecord, tool: ToolSpec, executionInput: unknown): Promise<OperationRecord> {
    const { store, engine } = this.context;
    const executionArn = record.executionArn ?? engine.executionArnFor(tool.stateMachineArn, record.executionName);
    if (tool.executionInput === 'arguments') {
      // The execution's input will not name its operation: a pointer by execution name does.
      await store.putExecutionPointer(record.executionName, record, this.aliasExpiry(record));
    }
    try {
      await engine.start({ stateMachineArn: tool.stateMachineArn, name: record.executionName, input: executionInput });
    } catch (error) {
      await this.settleFailedStart(record, executionArn, error);
    }
    // No write: the record says `working` already. One read tells whether a cancel landed
    // during the start (its StopExecution found nothing to stop), or status-sync got further.
    const current = await readLiveRecord(this.context, record);
    if (current.status === 'canceled') await this.settlement.stopQuietly(executionArn, 'Canceled while it was starting');
    return current;
  }

  /**
   * StartExecution failed (throttled, failed after the SDK's retries, or its answer lost):
   * the engine is asked whether the execution exists by its derived name. If it does, the
   * start succeeded and returns normally. If it does not, the record ends `failed` and its
   * slot is given back before the error goes to the caller, so a failed start never holds a
   * slot, and a client that retries with a new id never runs the work twice. If the engine
   * cannot tell, a StopExecution by the derived ARN makes sure nothing runs, and the record
   * ends the same way; if that fails too, the record stays `working` for slot repair and
   * reconciliation.
   */
  private async settleFailedStart(record: OperationRecord, executionArn: string, error: unknown): Promise<void> {
    const startError = new OperationError('INTERNAL', 'The workflow engine did not start the execution', { cause: error });
    try {
      await this.context.engine.describe(executionArn);
      return; // It runs: the start succeeded and only its answer was lost.
    } catch (describeError) {
      if (!(describeError instanceof ExecutionNotFoundError)) {
        // Unknown: a StopExecution by the derived ARN settles it. Stopped or absent, nothing
        // runs for the record, which then ends as below (a client's retry runs the work once).
        try {
          await this.settlement.stopQuietly(executionArn, 'Its start could not be confirmed');
        } catch {
          // Still unknown: the record stays `working` for slot repair and reconciliation.
          throw startError;
        }
      }
    }
    // `failedStart` tells status-sync that a RUNNING event that comes later is of an execution to stop.
    const outcome: Outcome = {
      kind: 'internal-error',
      message: `could not start: the workflow engine did not accept the execution (${errorNameOf(error)})`,
      failedStart: true,
    };
    await this.settlement.finishFailed(record, outcome);
    // A cancel that came meanwhile has ended the record already: nothing started for it to stop.
    throw startError;
  }

  /** An alias lives as long as its operation can: the record's expiry (the server's longest keepAlive when unlimited). */
  private aliasExpiry(record: OperationRecord): number {
    return record.expiresAt ?? Math.ceil(record.createdAt / 1000) + 366 * 24 * 3600 + this.context.limits.maxKeepAliveSeconds;
  }
}

/** An error's name only: what a client may be shown of an engine failure (its message may carry ARNs). */
function errorNameOf(error: unknown): string {
  return error instanceof Error ? error.name : 'unknown error';
}
