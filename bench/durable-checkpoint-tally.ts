/**
 * What durable handlers send through the durable execution SDK's own client
 * (DurableExecutionApiClient: CheckpointDurableExecution, GetDurableExecutionState), counted by
 * wrapping the client's methods on its prototype until `restore()`. The local durable service
 * makes that client for the handlers, out of the local stack's reach, and a new one for each
 * invocation, so the instance a call comes from tells the invocations apart.
 */
import { DurableExecutionApiClient } from '@aws/durable-execution-sdk-js';

/** What the durable function's invocations sent through the SDK's client. */
export interface CheckpointTally {
  /** CheckpointDurableExecution and GetDurableExecutionState calls, by invocation (one client each). */
  callsByInvocation: Map<DurableExecutionApiClient, { calls: Record<string, number>; firstMs: number; lastMs: number }>;
  /** Each operation checkpointed, by id: its type (STEP, WAIT, CALLBACK, CONTEXT...). */
  operations: Map<string, string>;
  /** Bytes of the checkpointed updates (their JSON, payloads included). */
  bytes: number;
  /** The execution checkpointed (one run is measured at a time). */
  executionArn?: string;
}

export interface CheckpointTallies {
  /** What was sent since the wrapping or the last reset. */
  current(): CheckpointTally;
  reset(): void;
  /** Puts the SDK's methods back. */
  restore(): void;
}

/** Wraps the SDK's checkpoint client methods until `restore()`, tallying what they send. */
export function tallyDurableCheckpoints(): CheckpointTallies {
  const prototype = DurableExecutionApiClient.prototype;
  const original = { checkpoint: prototype.checkpoint, getExecutionState: prototype.getExecutionState };
  let tally: CheckpointTally = { callsByInvocation: new Map(), operations: new Map(), bytes: 0 };
  const note = (client: DurableExecutionApiClient, command: string) => {
    const now = performance.now();
    const entry = tally.callsByInvocation.get(client) ?? { calls: {}, firstMs: now, lastMs: now };
    entry.calls[command] = (entry.calls[command] ?? 0) + 1;
    tally.callsByInvocation.set(client, entry);
    return entry;
  };
  prototype.checkpoint = async function (this: DurableExecutionApiClient, params, logger) {
    const entry = note(this, 'CheckpointDurableExecution');
    tally.executionArn = params.DurableExecutionArn;
    for (const update of params.Updates ?? []) if (update.Id && update.Type) tally.operations.set(update.Id, update.Type);
    tally.bytes += Buffer.byteLength(JSON.stringify(params.Updates ?? []));
    try {
      return await original.checkpoint.call(this, params, logger);
    } finally {
      entry.lastMs = performance.now();
    }
  };
  prototype.getExecutionState = async function (this: DurableExecutionApiClient, params, logger) {
    const entry = note(this, 'GetDurableExecutionState');
    try {
      return await original.getExecutionState.call(this, params, logger);
    } finally {
      entry.lastMs = performance.now();
    }
  };
  return {
    current: () => tally,
    reset: () => {
      tally = { callsByInvocation: new Map(), operations: new Map(), bytes: 0 };
    },
    restore: () => Object.assign(prototype, original),
  };
}
