/**
 * Progress and log lines from a durable tool, written to the operation as the built-in
 * report_progress worker writes them for a state machine (lambdas/workers/report-progress-worker.ts).
 * Each report is a step, so a replay does not report it again. Best-effort, as the worker
 * is: a report the store could not take is logged and the run goes on.
 */
import type { DurableContext } from '@aws/durable-execution-sdk-js';
import { deployedMetrics, deployedOperations } from '../app/deployed-operations.ts';
import { consoleLogger } from '../logging/logger.ts';
import type { LogLevel } from '../operations/operation.ts';
import type { Logger } from '../operations/ports.ts';
import { ReportRefused } from '../operations/run-reports.ts';
import { operationsInScope } from '../workers/built-in-scope.ts';
import { DurableToolError } from './durable-tool-error.ts';
import { executionNameOf, operationKeyOf, type ToolEvent } from './tool-event.ts';

/**
 * A progress report: an absolute `progress` (raised to the latest, so it never goes back) or
 * an `increment` on it, out of `total` when known, with a status message of up to 1,000 characters.
 */
export type ProgressReport = ({ progress: number; increment?: never } | { increment: number; progress?: never }) & { total?: number; message?: string };

/** A log line for the client (MCP logging levels), with `data` of up to 4 KB of JSON. */
export interface LogReport {
  level: LogLevel;
  logger?: string;
  data: unknown;
}

export interface ReportOptions {
  /** The step's name in the execution's history. */
  name?: string;
  /** Where a report the store did not take is logged (never with its content). */
  logger?: Logger;
}

/**
 * Reports progress to the client (`notifications/progress`, the operation's status message).
 * A malformed report rejects with a {@link DurableToolError} named `Mcp.InvalidReport`.
 */
export function reportProgress(context: DurableContext, event: ToolEvent<unknown>, report: ProgressReport, options: ReportOptions = {}): Promise<void> {
  return writeReport(context, event, report, options.name ?? 'report-progress', options.logger);
}

/** Sends a log line to the client (`notifications/message`); as {@link reportProgress} otherwise. */
export function reportLog(context: DurableContext, event: ToolEvent<unknown>, report: LogReport, options: ReportOptions = {}): Promise<void> {
  return writeReport(context, event, report, options.name ?? 'report-log', options.logger);
}

async function writeReport(context: DurableContext, event: ToolEvent<unknown>, report: object, name: string, logger: Logger = consoleLogger): Promise<void> {
  const executionName = executionNameOf(context);
  const outcome = await context.step(name, async (): Promise<{ refused?: string }> => {
    const operation = operationKeyOf(event);
    try {
      await operationsInScope(deployedOperations).reports.report({ executionName, report, ...(operation ? { operation } : {}) });
    } catch (error) {
      // A malformed report is a bug in the tool: the step's result, so it fails the run the same way on every replay.
      if (error instanceof ReportRefused) return { refused: error.message };
      // The report's content stays out of the log: it may carry tool data.
      logger.warn('progress report not written; the run goes on', {
        executionName,
        error: error instanceof Error ? `${error.name}: ${error.message}` : String(error),
      });
    } finally {
      deployedMetrics.flush();
    }
    return {};
  });
  if (outcome.refused !== undefined) throw new DurableToolError('Mcp.InvalidReport', outcome.refused);
}
