/** The operations core over in-memory ports, with a clock the test moves. */
import { expect } from 'vitest';
import { InMemoryRecordStore, type InMemoryRecordStoreOptions } from './in-memory-record-store.ts';
import { OperationError } from '../../lambdas/operations/operation-error.ts';
import { createOperations, DEFAULT_LIMITS, type OperationsLimits } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import type { Logger } from '../../lambdas/operations/ports.ts';
import { FakeWorkflowEngine } from './fake-workflow-engine.ts';

export class ManualClock {
  constructor(public ms = 1_700_000_000_000) {}
  now = () => this.ms;
  advance(seconds: number) {
    this.ms += seconds * 1000;
  }
}

export const TEST_LIMITS: OperationsLimits = { ...DEFAULT_LIMITS, maxKeepAliveSeconds: 3600, maxBlockingSeconds: 2, reconcileAfterSeconds: 30 };

/** A logger that keeps what it was told, so tests can check nothing secret is logged. */
export function memoryLogger(): Logger & { lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> } {
  const lines: Array<{ level: string; message: string; fields: Record<string, unknown> }> = [];
  return {
    lines,
    error: (message, fields) => lines.push({ level: 'error', message, fields }),
    warn: (message, fields) => lines.push({ level: 'warn', message, fields }),
  };
}

export function coreHarness(options: { limits?: Partial<OperationsLimits>; store?: InMemoryRecordStoreOptions } = {}) {
  const store = new InMemoryRecordStore(options.store);
  const engine = new FakeWorkflowEngine();
  const clock = new ManualClock();
  const logger = memoryLogger();
  const service = createOperations({ store, engine, limits: { ...TEST_LIMITS, ...options.limits }, clock, logger, input: mcpInputProtocol });
  return { store, engine, clock, logger, service };
}

export async function expectOperationError(promise: Promise<unknown>, code: OperationError['code']) {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(OperationError);
  expect((error as OperationError).code).toBe(code);
  return error as OperationError;
}

/** One fixed secret key for tests: two app instances built with it accept each other's state. */
export const TEST_SECRET_KEY = async () => new Uint8Array(32).fill(7);
