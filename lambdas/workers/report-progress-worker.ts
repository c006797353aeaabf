/**
 * The built-in report_progress worker: a Task state calls it with `{ progress, total?,
 * message? }` or `{ level, logger?, data }` (plus `executionName`, and `operation` when the
 * execution's input names it, which the tool loader adds). It writes the report to the
 * operation record and returns its input unchanged, so the state can sit in a flow without
 * disturbing it (use ResultPath: null to keep the state's input).
 *
 * Reporting is best-effort: a report the store could not take (throttled, unreachable) is
 * logged and the run goes on, as a lost progress line is worth less than the run (the
 * shipped definitions neither retry nor catch this state). Only a malformed report, a bug
 * in the definition, fails the state.
 */
import { consoleLogger } from '../logging/logger.ts';
import type { Logger } from '../operations/ports.ts';
import type { OperationsService } from '../operations/operations-service.ts';
import { ReportRefused } from '../operations/run-reports.ts';
import { isObject } from '../shared/json-values.ts';
import { operationsInScope, WorkerError } from './built-in-scope.ts';

/** The worker's handler over the core `fallback()` builds (when none is in scope); store failures go to `logger`. */
export function createReportProgressHandler(fallback: () => OperationsService, logger: Logger = consoleLogger) {
  return async (event: unknown): Promise<unknown> => {
    if (!isObject(event) || typeof event.executionName !== 'string') {
      throw new WorkerError('Mcp.InvalidReport', 'Invalid report_progress payload: executionName is missing (call the worker from a Task state of a tool)');
    }
    const { executionName, operation, ...report } = event;
    const key =
      isObject(operation) && typeof operation.ownerId === 'string' && typeof operation.token === 'string'
        ? { ownerId: operation.ownerId, token: operation.token }
        : undefined;
    try {
      await operationsInScope(fallback).reports.report({ executionName, report, ...(key ? { operation: key } : {}) });
    } catch (error) {
      if (error instanceof ReportRefused) throw new WorkerError(error.errorName, error.message);
      // The report's content stays out of the log: it may carry tool data.
      logger.warn('progress report not written; the run goes on', {
        executionName,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    }
    return report;
  };
}
