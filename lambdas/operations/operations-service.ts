/**
 * The operations core: starts tool executions, tracks them in the record store and
 * answers status, result and cancel questions, whatever dialect asked (DESIGN §4).
 * Every status write is conditional, so a crash, a redelivered event or a race
 * between cancel and completion never loses work or overwrites a terminal state.
 */
import {
  isTerminal,
  type Dialect,
  type OperationKey,
  type OperationRecord,
  type OperationStatus,
  type Outcome,
} from './operation.ts';
import { OperationError } from './operation-error.ts';
import {
  ExecutionNotFoundError,
  InvalidCursorError,
  RecordTooLargeError,
  systemClock,
  type Clock,
  type ExecutionSnapshot,
  type Page,
  type RecordStore,
  type WorkflowEngine,
} from './ports.ts';
import type { ToolSpec } from './tool-spec.ts';
import { argumentsHash, executionNameFor, mintId } from './fingerprint.ts';
import { expiryFor, outcomeOf, statusMessageFor, terminalChanges } from './execution-outcome.ts';

export interface OperationsLimits {
  /** Server-wide bound on keepAlive, seconds. */
  maxKeepAliveSeconds: number;
  /** Whether a client may be granted an unlimited (`null`) keepAlive. */
  allowUnlimitedKeepAlive: boolean;
  /** Bound on any blocking wait (synchronous runs, blocking result reads), seconds. */
  maxBlockingSeconds: number;
  /**
   * A running record not updated for this long (or its poll interval, if longer) is
   * checked against its execution. Status-sync keeps records current, so this only
   * catches lost events; a floor keeps DescribeExecution (15/s per account) off the
   * polling path.
   */
  reconcileAfterSeconds: number;
}

export const DEFAULT_LIMITS: OperationsLimits = {
  maxKeepAliveSeconds: 7 * 24 * 3600,
  allowUnlimitedKeepAlive: false,
  maxBlockingSeconds: 50,
  reconcileAfterSeconds: 60,
};

export interface StartOperationInput {
  ownerId: string;
  tool: ToolSpec;
  arguments: Record<string, unknown>;
  token: string;
  dialect: Dialect;
  /** Requested keepAlive in seconds; `null` asks for unlimited; absent takes the tool's default. */
  keepAliveSeconds?: number | null;
  requestId?: string;
  dialectState?: Record<string, unknown>;
}

export interface SyncRunInput {
  ownerId: string;
  tool: ToolSpec;
  arguments: Record<string, unknown>;
  requestId?: string;
}

const NON_TERMINAL: readonly OperationStatus[] = ['submitted', 'working', 'input_required'];
/** A record still `submitted` this long after creation has lost its starter (a crash between steps). */
const STALLED_START_MS = 60_000;

export class OperationsService {
  constructor(
    private readonly store: RecordStore,
    private readonly engine: WorkflowEngine,
    readonly limits: OperationsLimits = DEFAULT_LIMITS,
    private readonly clock: Clock = systemClock,
  ) {}

  /** The keepAlive granted: the request clamped by the tool's and the server's maximum. */
  grantKeepAlive(tool: ToolSpec, requested: number | null | undefined): number | null {
    const toolMax = tool.timing.maxKeepAliveSeconds;
    const max = toolMax === null ? this.limits.maxKeepAliveSeconds : Math.min(toolMax, this.limits.maxKeepAliveSeconds);
    if (requested === null) {
      return this.limits.allowUnlimitedKeepAlive && toolMax === null ? null : max;
    }
    const wanted = requested ?? tool.timing.keepAliveSeconds;
    return Math.max(1, Math.min(Math.floor(wanted), max));
  }

  /**
   * Lifecycle steps 1-3: conditional create, StartExecution with the record's
   * deterministic name, then `working`. Idempotent per (owner, token, tool, arguments).
   */
  async start(input: StartOperationInput): Promise<OperationRecord> {
    const now = this.clock.now();
    const hash = argumentsHash(input.tool.name, input.arguments);
    const draft: OperationRecord = {
      ownerId: input.ownerId,
      token: input.token,
      tool: input.tool.name,
      argumentsHash: hash,
      dialect: input.dialect,
      status: 'submitted',
      statusMessage: statusMessageFor('submitted'),
      executionName: executionNameFor(input.ownerId, input.token, now),
      createdAt: now,
      updatedAt: now,
      keepAliveSeconds: this.grantKeepAlive(input.tool, input.keepAliveSeconds),
      pollIntervalSeconds: input.tool.timing.pollIntervalSeconds,
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
      ...(input.dialectState === undefined ? {} : { dialectState: input.dialectState }),
    };
    const created = await this.store.create(draft);
    let record: OperationRecord;
    if (created.created) {
      record = created.record;
      if (input.requestId !== undefined) {
        await this.store.putRequestAlias(input.ownerId, input.requestId, input.token, this.aliasExpiry(record));
      }
    } else {
      record = created.existing;
      if (record.tool !== input.tool.name || record.argumentsHash !== hash || record.dialect !== input.dialect) {
        throw new OperationError('TOKEN_REUSED', 'The token was already used for a different tool call');
      }
      this.assertLive(record);
      // Same call again: the first attempt's answer, or the rest of its start if it crashed mid-way.
      if (record.status !== 'submitted' || record.executionArn) return record;
    }
    return this.launch(record, input.tool, input.arguments);
  }

  private async launch(record: OperationRecord, tool: ToolSpec, args: Record<string, unknown>): Promise<OperationRecord> {
    let executionArn: string;
    try {
      ({ executionArn } = await this.engine.start({
        stateMachineArn: tool.stateMachineArn,
        name: record.executionName,
        input: { arguments: args, operation: { token: record.token, tool: tool.name, ownerId: record.ownerId } },
      }));
    } catch (error) {
      throw new OperationError('INTERNAL', 'The workflow engine did not start the execution', { cause: error });
    }
    const now = this.clock.now();
    const working = await this.store.transition(record, ['submitted'], {
      status: 'working',
      statusMessage: statusMessageFor('working'),
      executionArn,
      updatedAt: now,
    });
    // The status-sync handler may already have recorded a later state.
    return working ?? (await this.read(record));
  }

  /** Runs a tool to completion within its sync bound and returns how it ended. */
  async runSync(input: SyncRunInput): Promise<Outcome> {
    const { tool } = input;
    const boundSeconds = Math.min(tool.timing.syncTimeoutSeconds, this.limits.maxBlockingSeconds);
    if (tool.workflowType === 'EXPRESS') return this.runExpress(input, boundSeconds);
    // STANDARD: a tracked operation the caller waits on, so it can still be cancelled by request id.
    const record = await this.start({
      ownerId: input.ownerId,
      tool,
      arguments: input.arguments,
      token: `sync-${mintId()}`,
      dialect: 'sync',
      ...(input.requestId === undefined ? {} : { requestId: input.requestId }),
    });
    const done = await this.waitForTerminal(record, boundSeconds * 1000);
    if (!isTerminal(done.status)) {
      await this.cancel(done, `Synchronous call exceeded ${boundSeconds} s`);
      return {
        kind: 'tool-error',
        error: 'SyncTimeout',
        cause: `${tool.name} did not finish within ${boundSeconds} seconds and was stopped. Call it from a client that supports long-running operations to let it run longer.`,
      };
    }
    if (done.status === 'canceled') return { kind: 'tool-error', error: 'Canceled', cause: 'The operation was canceled' };
    return done.outcome ?? { kind: 'protocol-error', code: -32603, message: 'The operation ended without an outcome' };
  }

  /**
   * EXPRESS runs go through StartSyncExecution, which cannot be stopped: past the bound
   * the caller gets a tool error at once (so the Lambda never times out mid-answer) and
   * the execution ends at its own TimeoutSeconds.
   */
  private async runExpress(input: SyncRunInput, boundSeconds: number): Promise<Outcome> {
    const { tool } = input;
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), boundSeconds * 1000);
    try {
      const snapshot = await this.engine.startSync(
        {
          stateMachineArn: tool.stateMachineArn,
          name: `sync-${mintId()}`,
          input: { arguments: input.arguments, operation: { token: null, tool: tool.name, ownerId: input.ownerId } },
        },
        abort.signal,
      );
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

  /**
   * The current record: one read while status-sync keeps it current, reconciled with
   * the execution when it has not been updated for a while (a lost event).
   */
  async get(key: OperationKey): Promise<OperationRecord> {
    const record = await this.read(key);
    if (isTerminal(record.status)) return record;
    const age = this.clock.now() - record.updatedAt;
    if (age < Math.max(record.pollIntervalSeconds, this.limits.reconcileAfterSeconds) * 1000) return record;
    return this.reconcile(record);
  }

  /** Reads a live record: not found and expired are errors. */
  async read(key: OperationKey): Promise<OperationRecord> {
    const record = await this.store.get(key);
    if (!record) throw new OperationError('NOT_FOUND', 'Operation not found');
    this.assertLive(record);
    return record;
  }

  private assertLive(record: OperationRecord): void {
    // DynamoDB's TTL deletes items up to days late, so expiry is enforced here.
    if (record.expiresAt !== undefined && record.expiresAt * 1000 <= this.clock.now()) {
      throw new OperationError('EXPIRED', 'Operation has expired');
    }
  }

  private async reconcile(record: OperationRecord): Promise<OperationRecord> {
    if (!record.executionArn) {
      if (this.clock.now() - record.createdAt < STALLED_START_MS) return record;
      return this.failStalled(record);
    }
    let snapshot: ExecutionSnapshot;
    try {
      snapshot = await this.engine.describe(record.executionArn);
    } catch (error) {
      if (error instanceof ExecutionNotFoundError) return this.failStalled(record);
      // Status stays readable from the record when the engine is unreachable.
      return record;
    }
    return (await this.applyExecution(record, snapshot)) ?? record;
  }

  private async failStalled(record: OperationRecord): Promise<OperationRecord> {
    const now = this.clock.now();
    const outcome: Outcome = { kind: 'protocol-error', code: -32603, message: 'The execution for this operation was never started or no longer exists' };
    const failed = await this.store.transition(record, NON_TERMINAL, {
      status: 'failed',
      statusMessage: statusMessageFor('failed', outcome),
      updatedAt: now,
      completedAt: now,
      outcome,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    return failed ?? (await this.read(record));
  }

  /**
   * Applies an execution's state to its record (status-sync and reconciliation).
   * Terminal records are never overwritten; redelivery is harmless. Returns the
   * record as it stands after the write, or `undefined` when there is none.
   */
  async applyExecution(key: OperationKey, snapshot: ExecutionSnapshot): Promise<OperationRecord | undefined> {
    const record = await this.store.get(key);
    if (!record) return undefined;
    if (isTerminal(record.status)) return record;
    const now = this.clock.now();
    const changes = terminalChanges(snapshot, record.keepAliveSeconds, now);
    if (changes) {
      try {
        return (await this.store.transition(key, NON_TERMINAL, changes)) ?? (await this.store.get(key));
      } catch (error) {
        if (!(error instanceof RecordTooLargeError)) throw error;
        // The execution's output does not fit in a record: say so instead of losing the operation.
        const outcome: Outcome = { kind: 'protocol-error', code: -32603, message: 'The tool result is larger than the server can store' };
        const tooLarge = { ...changes, status: 'failed' as const, statusMessage: statusMessageFor('failed', outcome), outcome };
        return (await this.store.transition(key, NON_TERMINAL, tooLarge)) ?? (await this.store.get(key));
      }
    }
    if (record.status === 'submitted' && snapshot.status === 'RUNNING') {
      const working = await this.store.transition(key, ['submitted'], {
        status: 'working',
        statusMessage: statusMessageFor('working'),
        executionArn: snapshot.executionArn,
        updatedAt: now,
      });
      return working ?? (await this.store.get(key));
    }
    // Still running: record that we looked, so the next poll is one read again.
    return (await this.store.transition(key, [record.status], { updatedAt: now })) ?? record;
  }

  /**
   * Stops the execution and marks the operation canceled. A terminal operation is
   * returned unchanged, so cancelling twice (or after completion) changes nothing.
   */
  async cancel(key: OperationKey, reason = 'Canceled by the client'): Promise<OperationRecord> {
    const record = await this.read(key);
    if (isTerminal(record.status)) return record;
    if (record.executionArn) {
      try {
        await this.engine.stop(record.executionArn, { error: 'Mcp.Canceled', cause: reason });
      } catch (error) {
        if (!(error instanceof ExecutionNotFoundError)) {
          throw new OperationError('INTERNAL', 'The workflow engine did not stop the execution', { cause: error });
        }
      }
    }
    const now = this.clock.now();
    const canceled = await this.store.transition(key, NON_TERMINAL, {
      status: 'canceled',
      statusMessage: statusMessageFor('canceled'),
      updatedAt: now,
      completedAt: now,
      ...expiryFor(now, record.keepAliveSeconds),
    });
    return canceled ?? (await this.read(key));
  }

  /** Waits until the operation is terminal or `boundMs` passes; returns the last record seen. */
  async waitForTerminal(key: OperationKey, boundMs: number): Promise<OperationRecord> {
    const deadline = this.clock.now() + boundMs;
    let delay = 50;
    for (;;) {
      const record = await this.get(key);
      const left = deadline - this.clock.now();
      if (isTerminal(record.status) || left <= 0) return record;
      await new Promise((resolve) => setTimeout(resolve, Math.min(delay, left)));
      delay = Math.min(delay * 2, 1000, record.pollIntervalSeconds * 1000);
    }
  }

  /** The token a JSON-RPC request id started, for `notifications/cancelled`. */
  async findByRequestId(ownerId: string, requestId: string): Promise<OperationKey | undefined> {
    const token = await this.store.findTokenByRequestId(ownerId, requestId);
    return token === undefined ? undefined : { ownerId, token };
  }

  /** The owner's live operations, newest first. */
  async list(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>> {
    let page: Page<OperationRecord>;
    try {
      page = await this.store.listByOwner(ownerId, options);
    } catch (error) {
      if (error instanceof InvalidCursorError) throw new OperationError('INVALID_CURSOR', 'Invalid cursor', { cause: error });
      throw error;
    }
    const now = this.clock.now();
    return { ...page, items: page.items.filter((r) => r.expiresAt === undefined || r.expiresAt * 1000 > now) };
  }

  /** Pending alias entries live as long as the operation could: its keepAlive past the server's longest run. */
  private aliasExpiry(record: OperationRecord): number {
    const yearSeconds = 366 * 24 * 3600;
    return Math.ceil(record.createdAt / 1000) + yearSeconds + (record.keepAliveSeconds ?? yearSeconds);
  }

  /** A fresh server-minted operation id (128 random bits). */
  mintToken(): string {
    return mintId();
  }
}
