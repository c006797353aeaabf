/**
 * Progress and log lines an execution reports while it runs (through the built-in
 * report_progress worker). They are written to the operation record, numbered, so a
 * waiting call on any instance streams each one once, and polls show the latest.
 */
import { isTerminal, LOG_LEVELS, type LogLevel, type OperationKey, type OperationRecord, type RunReport } from './operation.ts';
import type { Clock, RecordStore } from './ports.ts';
import { updateRecord } from './record-updates.ts';
import type { ExecutionLookup } from './operation-reads.ts';

/** Reports kept on the record: enough for a waiting call polling once a second to miss none. */
export const MAX_KEPT_REPORTS = 50;
/** The largest log `data` (JSON, UTF-8 bytes). */
export const MAX_LOG_DATA_BYTES = 4096;

/** Why a report was not written; the worker fails its state with `errorName`. */
export class ReportRefused extends Error {
  readonly errorName = 'Mcp.InvalidReport';
  constructor(message: string) {
    super(message);
    this.name = 'ReportRefused';
  }
}

export interface RunReportsDeps {
  store: RecordStore;
  clock: Clock;
  /** The operation an execution runs, for executions whose input does not say. */
  executions: ExecutionLookup;
}

export class RunReports {
  constructor(private readonly deps: RunReportsDeps) {}

  /**
   * Appends a report `{ progress, total?, message? }` or `{ level, logger?, data }` to the
   * operation the execution runs. A report for an operation that is over is dropped: the
   * run must not fail for it.
   */
  async report(input: { operation?: OperationKey; executionName: string; report: unknown }): Promise<{ written: boolean }> {
    const body = parseReport(input.report);
    const operation = input.operation ?? (await this.deps.executions.findByExecutionName(input.executionName));
    if (!operation) return { written: false };
    const { written } = await updateRecord(this.deps.store, this.deps.clock, operation, (record, now) => {
      if (isTerminal(record.status) || record.executionName !== input.executionName) return undefined;
      const previous = record.reports ?? [];
      const seq = (previous.at(-1)?.seq ?? 0) + 1;
      const report = { ...resolveIncrement(body, record), seq, at: now } as RunReport;
      const message = report.kind === 'progress' ? report.message : typeof report.data === 'string' ? report.data : undefined;
      return {
        reports: [...previous, report].slice(-MAX_KEPT_REPORTS),
        // A question's own message stays while the operation waits for the answer.
        ...(message !== undefined && record.status !== 'input_required' ? { statusMessage: message.slice(0, 1000) } : {}),
      };
    });
    return { written };
  }
}

/** A report before it is numbered. */
type ReportBody = { kind: 'progress'; progress: number; total?: number; message?: string } | { kind: 'log'; level: LogLevel; logger?: string; data: unknown };
type ParsedReport = ReportBody | { kind: 'progress'; increment: number; total?: number; message?: string };

/**
 * "The progress value MUST increase with each notification": an increment adds to the latest
 * progress; an absolute value below it is raised to it, so parallel reporters never go backwards.
 */
function resolveIncrement(body: ParsedReport, record: OperationRecord): ReportBody {
  if (body.kind !== 'progress') return body;
  const latest = latestProgress(record)?.progress ?? 0;
  const { increment, ...rest } = body as { increment?: number; progress?: number; total?: number; message?: string; kind: 'progress' };
  const progress = increment !== undefined ? latest + increment : Math.max(latest, rest.progress ?? 0);
  return { ...rest, kind: 'progress', progress };
}

/**
 * Checks a report by hand, field by field: this core runs in status sync and the workers,
 * whose bundles carry no schema library.
 */
function parseReport(value: unknown): ParsedReport {
  const report = typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  if (report && 'level' in report) {
    const problem = logProblem(report);
    if (problem) throw new ReportRefused(`Invalid log report: ${problem}`);
    if (Buffer.byteLength(JSON.stringify(report.data)) > MAX_LOG_DATA_BYTES)
      throw new ReportRefused(`Invalid log report: data is over ${MAX_LOG_DATA_BYTES} bytes of JSON`);
    return { kind: 'log', level: report.level as LogLevel, ...(report.logger === undefined ? {} : { logger: report.logger as string }), data: report.data };
  }
  const problem = report ? progressProblem(report) : 'report must be an object';
  if (problem || !report)
    throw new ReportRefused(`Invalid progress report: ${problem} (a report is { progress | increment, total?, message? } or { level, logger?, data })`);
  const { progress, increment, total, message } = report as { progress?: number; increment?: number; total?: number; message?: string };
  return {
    kind: 'progress',
    ...(progress === undefined ? {} : { progress }),
    ...(increment === undefined ? {} : { increment }),
    ...(total === undefined ? {} : { total }),
    ...(message === undefined ? {} : { message }),
  } as ParsedReport;
}

const PROGRESS_FIELDS = new Set(['progress', 'increment', 'total', 'message']);
const LOG_FIELDS = new Set(['level', 'logger', 'data']);

function progressProblem(report: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(report).find((key) => !PROGRESS_FIELDS.has(key));
  if (unknown !== undefined) return `${unknown} is not a field of a report`;
  const finite = (key: string, check: (n: number) => boolean, rule: string) => {
    const v = report[key];
    if (v === undefined) return undefined;
    return typeof v === 'number' && Number.isFinite(v) && check(v) ? undefined : `${key} must be a ${rule}`;
  };
  const problem =
    finite('progress', (n) => n >= 0, 'finite number, 0 or more') ??
    finite('increment', (n) => n > 0, 'finite positive number') ??
    finite('total', (n) => n > 0, 'finite positive number');
  if (problem) return problem;
  if (report.message !== undefined && (typeof report.message !== 'string' || report.message.length > 1000))
    return 'message must be a string of at most 1000 characters';
  if ((report.progress === undefined) === (report.increment === undefined)) return 'report needs exactly one of progress and increment';
  return undefined;
}

function logProblem(report: Record<string, unknown>): string | undefined {
  const unknown = Object.keys(report).find((key) => !LOG_FIELDS.has(key));
  if (unknown !== undefined) return `${unknown} is not a field of a log report`;
  if (typeof report.level !== 'string' || !(LOG_LEVELS as readonly string[]).includes(report.level)) return `level must be one of ${LOG_LEVELS.join(', ')}`;
  if (report.logger !== undefined && (typeof report.logger !== 'string' || report.logger.length > 200))
    return 'logger must be a string of at most 200 characters';
  if (report.data === undefined) return 'data is required';
  return undefined;
}

/** The latest progress report, for status answers. */
export function latestProgress(record: OperationRecord): Extract<RunReport, { kind: 'progress' }> | undefined {
  const reports = record.reports ?? [];
  for (let i = reports.length - 1; i >= 0; i--) {
    const report = reports[i];
    if (report?.kind === 'progress') return report;
  }
  return undefined;
}

/** Reports numbered after `afterSeq`: what a waiting call has not sent yet. */
export function reportsAfter(record: OperationRecord, afterSeq: number): RunReport[] {
  return (record.reports ?? []).filter((report) => report.seq > afterSeq);
}

/** Whether a log line at `level` goes to a client that asked for `threshold` and above. */
export function logLevelPasses(level: LogLevel, threshold: LogLevel): boolean {
  return LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);
}
