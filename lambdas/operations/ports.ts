/**
 * The ports the operations core depends on. Adapters live in `lambdas/aws/`
 * (DynamoDB, Step Functions) and in-memory versions beside this file for unit tests.
 */
import type { OperationChanges, OperationKey, OperationRecord, OperationStatus } from './operation.ts';

export type CreateResult = { created: true; record: OperationRecord } | { created: false; existing: OperationRecord };

export interface Page<T> {
  items: T[];
  /** Opaque; absent on the last page. */
  nextCursor?: string;
}

/** A listing cursor the store did not issue for this owner; the edge answers -32602. */
export class InvalidCursorError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Invalid cursor', options);
    this.name = 'InvalidCursorError';
  }
}

/** A record larger than the store's item size limit; nothing was written. */
export class RecordTooLargeError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('Operation record exceeds the item size limit', options);
    this.name = 'RecordTooLargeError';
  }
}

export interface RecordStore {
  /** Conditional put (`attribute_not_exists`): never overwrites an existing token. */
  create(record: OperationRecord): Promise<CreateResult>;
  /** Strongly consistent read; `undefined` when absent. Expiry is the caller's concern. */
  get(key: OperationKey): Promise<OperationRecord | undefined>;
  /**
   * Conditional update: applies `changes` only while the current status is one of `from`.
   * Returns the updated record, or `undefined` when the condition failed or the record is absent.
   */
  transition(key: OperationKey, from: readonly OperationStatus[], changes: OperationChanges): Promise<OperationRecord | undefined>;
  /** The owner's records, newest first (served by the owner+time index, never a scan). */
  listByOwner(ownerId: string, options: { limit: number; cursor?: string }): Promise<Page<OperationRecord>>;
  /** Remembers which token a JSON-RPC request id started, for `notifications/cancelled`. */
  putRequestAlias(ownerId: string, requestId: string, token: string, expiresAt: number): Promise<void>;
  findTokenByRequestId(ownerId: string, requestId: string): Promise<string | undefined>;
}

/** Step Functions execution states, as the service names them. */
export type ExecutionStatus = 'RUNNING' | 'SUCCEEDED' | 'FAILED' | 'TIMED_OUT' | 'ABORTED' | 'PENDING_REDRIVE';

export interface ExecutionSnapshot {
  executionArn: string;
  status: ExecutionStatus;
  /** Parsed JSON output, when SUCCEEDED. */
  output?: unknown;
  error?: string;
  cause?: string;
  startDate?: Date;
  stopDate?: Date;
  /** Parsed execution input, when the engine returns it. */
  input?: unknown;
}

/** Thrown by engines when an execution ARN names nothing. */
export class ExecutionNotFoundError extends Error {
  constructor(executionArn: string, options?: { cause?: unknown }) {
    super(`Execution not found: ${executionArn}`, options);
    this.name = 'ExecutionNotFoundError';
  }
}

export interface StartExecutionInput {
  stateMachineArn: string;
  /** Deterministic: starting the same name with the same input twice starts one execution. */
  name: string;
  input: unknown;
}

export interface WorkflowEngine {
  /** Idempotent for the same name and input (Step Functions' own guarantee for STANDARD). */
  start(input: StartExecutionInput): Promise<{ executionArn: string }>;
  /** EXPRESS only: runs to completion (at most 5 minutes) and returns the final snapshot; `signal` gives up waiting. */
  startSync(input: StartExecutionInput, signal?: AbortSignal): Promise<ExecutionSnapshot>;
  describe(executionArn: string): Promise<ExecutionSnapshot>;
  /** Stops a running execution; stopping a finished one is not an error. */
  stop(executionArn: string, reason: { error: string; cause: string }): Promise<void>;
  sendTaskSuccess(taskToken: string, output: unknown): Promise<void>;
  sendTaskFailure(taskToken: string, failure: { error: string; cause: string }): Promise<void>;
}

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };
