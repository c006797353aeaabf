/**
 * The built-in report_progress worker: a Task state calls it with `{ progress, total?,
 * message? }` or `{ level, logger?, data }` (plus `executionName`, and `operation` when the
 * execution's input names it, which the tool loader adds). It writes the report to the
 * operation record and returns its input unchanged, so the state can sit in a flow without
 * disturbing it (use ResultPath: null to keep the state's input).
 */
import type { OperationsService } from '../operations/operations-service.ts';
import { ReportRefused } from '../operations/run-reports.ts';
import { isObject } from '../shared/json-values.ts';
import { operationsInScope, WorkerError } from './built-in-scope.ts';

export function createReportProgressHandler(fallback: () => OperationsService) {
  return async (event: unknown): Promise<unknown> => {
    if (!isObject(event) || typeof event.executionName !== 'string') {
      throw new WorkerError('Mcp.InvalidReport', 'Invalid report_progress payload: executionName is missing (call the worker from a Task state of a tool)');
    }
    const { executionName, operation, ...report } = event;
    const key = isObject(operation) && typeof operation.ownerId === 'string' && typeof operation.token === 'string' ? { ownerId: operation.ownerId, token: operation.token } : undefined;
    try {
      await operationsInScope(fallback).reports.report({ executionName, report, ...(key ? { operation: key } : {}) });
    } catch (error) {
      if (error instanceof ReportRefused) throw new WorkerError(error.errorName, error.message);
      throw error;
    }
    return report;
  };
}
