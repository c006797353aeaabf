/**
 * What the operations core is built from: its ports, and what the app wires in beside them
 * (see `createOperations`). Every part of the core (starts, settlement, reads) is built over
 * the same `OperationsContext`, the options with their defaults filled in.
 */
import { consoleLogger } from '../logging/logger.ts';
import { noInputProtocol, type InputProtocol } from './input-protocol.ts';
import { DEFAULT_LIMITS, type OperationsLimits } from './operations-limits.ts';
import { systemClock, type Clock, type Logger, type RecordStore, type ResultShaper, type WorkflowEngine } from './ports.ts';
import type { ResultSpill } from './result-store.ts';
import type { ToolCatalog } from './tool-spec.ts';

export interface OperationsOptions {
  store: RecordStore;
  engine: WorkflowEngine;
  /**
   * The questions executions may ask and the answers they take, in the wire's words
   * (lambdas/mcp/input/mcp-input-protocol.ts). @default noInputProtocol: a process that
   * neither starts operations nor relays questions (status sync) needs none, and so carries no
   * schema library.
   */
  input?: InputProtocol;
  /** @default DEFAULT_LIMITS */
  limits?: OperationsLimits;
  /** @default systemClock */
  clock?: Clock;
  /** @default consoleLogger */
  logger?: Logger;
  /** Where outputs too large for a record go; without it they stay in the record (up to its size limit). */
  results?: ResultSpill;
  /** Checks and shapes a finished result once, at completion (the protocol edge's rules). Without it, outcomes stay raw and are shaped on read. */
  shapeResult?: ResultShaper;
  /** The tools this deploy serves: a running operation of a tool not among them, whose execution is gone, is failed at once. */
  catalog?: ToolCatalog;
}

/** The options with their defaults filled in. */
export type OperationsContext = Required<Pick<OperationsOptions, 'store' | 'engine' | 'input' | 'limits' | 'clock' | 'logger'>> &
  Pick<OperationsOptions, 'results' | 'shapeResult' | 'catalog'>;

export function contextOf(options: OperationsOptions): OperationsContext {
  return {
    ...options,
    input: options.input ?? noInputProtocol,
    limits: options.limits ?? DEFAULT_LIMITS,
    clock: options.clock ?? systemClock,
    logger: options.logger ?? consoleLogger,
  };
}

/** Whether a record has expired: DynamoDB's TTL deletes items up to days late, so expiry is enforced on read. */
export function isExpired(record: { expiresAt?: number }, nowMs: number): boolean {
  return record.expiresAt !== undefined && record.expiresAt * 1000 <= nowMs;
}
