/**
 * Where the built-in workers (request_input, report_progress) find the operations core:
 * in-process, the local runtime's own (set with `withOperations`); deployed, one built from
 * the environment on first use.
 */
import { contextSlot } from '../shared/context-slot.ts';
import type { OperationsService } from '../operations/operations-service.ts';

const scoped = contextSlot<OperationsService>('built-in operations');

/** Runs `fn` with `operations` as the built-in workers' core (the local runtime runs workers in-process). */
export function withOperations<T>(operations: OperationsService, fn: () => T): T {
  return scoped.run(operations, fn);
}

/** The core in scope, else `fallback()`. */
export function operationsInScope(fallback: () => OperationsService): OperationsService {
  return scoped.getStore() ?? fallback();
}

/** An error whose name Step Functions shows as the state's Error (the Lambda runtime reports `name` as errorType). */
export class WorkerError extends Error {
  constructor(name: string, message: string) {
    super(message);
    this.name = name;
  }
}
