/**
 * Progress and log lines a run reports (run-reports.ts), shown to clients: as
 * `notifications/progress` and `notifications/message` on the response stream of a call
 * that waits on the run, and as the latest progress in status answers.
 *
 * The waiting call reads the reports from the store, never from memory, so a report
 * written by any instance reaches the call on whichever instance holds its stream. Each
 * report is numbered, so each goes out once, in order, however often the record is read.
 */
import type { Logger } from '../../operations/ports.ts';
import type { LogLevel, OperationRecord, RunReport } from '../../operations/operation.ts';
import { latestProgress, logLevelPasses, reportsAfter } from '../../operations/run-reports.ts';

/**
 * The level a principal that never sent `logging/setLevel` gets. The spec leaves it to the
 * server: `info` and above, so debug lines reach only a client that asked for them.
 */
export const DEFAULT_LOG_LEVEL: LogLevel = 'info';

/** Our `_meta` key for the latest progress, where a wire has no field of its own for it (2025-11-25 `tasks/get`). */
export const PROGRESS_META_KEY = 'async-mcp/progress';

/** "Progress tokens MUST be a string or integer value." */
export type ProgressToken = string | number;

/** A notification as the SDK sends it (`ctx.mcpReq.notify`). */
export interface OutgoingNotification {
  method: 'notifications/progress' | 'notifications/message';
  params: Record<string, unknown>;
}

/** Progress as status answers show it: `{ progress, total?, message? }`. */
export interface ProgressView {
  progress: number;
  total?: number;
  message?: string;
}

/** The latest progress the run reported, for status answers; `undefined` when it reported none. */
export function progressOf(record: OperationRecord): ProgressView | undefined {
  const latest = latestProgress(record);
  if (!latest) return undefined;
  return progressFields(latest);
}

/** The request's `_meta.progressToken` when it is one: a string, or an integer. */
export function progressTokenOf(meta: unknown): ProgressToken | undefined {
  const token = typeof meta === 'object' && meta !== null ? (meta as Record<string, unknown>).progressToken : undefined;
  if (typeof token === 'string') return token;
  return typeof token === 'number' && Number.isSafeInteger(token) ? token : undefined;
}

/** What one waiting call's notifications need: where they go and what the client asked for. */
export interface RunNotificationsOptions {
  /** The waiting request's `progressToken`: without one, no progress goes out. */
  progressToken?: ProgressToken;
  /** The principal's `logging/setLevel`, read once, when the first log line shows up. */
  logLevel: () => Promise<LogLevel | undefined>;
  /** Sends one notification on the waiting request's stream. */
  notify: (notification: OutgoingNotification) => Promise<void>;
  logger: Logger;
  /** For log lines only: the request's id. */
  requestId: string;
}

/**
 * The reports of one run, sent on one response stream. `send` may be called with any
 * record read at any time: reports already sent, or older than those, are skipped.
 */
export class RunNotifications {
  #sentSeq = 0;
  #lastProgress: number | undefined;
  #threshold: Promise<LogLevel> | undefined;
  #queue: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(private readonly options: RunNotificationsOptions) {}

  /** Sends the reports on `record` not sent yet, after those already queued; resolves once they are out. */
  send(record: OperationRecord): Promise<void> {
    const fresh = reportsAfter(record, this.#sentSeq);
    const last = fresh.at(-1);
    if (!last) return this.#queue;
    this.#sentSeq = last.seq;
    this.#queue = this.#queue.then(() => this.#deliver(fresh));
    return this.#queue;
  }

  async #deliver(reports: RunReport[]): Promise<void> {
    for (const report of reports) {
      if (this.#closed) return;
      const notification = await this.#notificationFor(report);
      if (!notification) continue;
      try {
        await this.options.notify(notification);
      } catch (error) {
        // The client went away: nobody reads this stream any more, and the call ends at its bound.
        this.#closed = true;
        this.options.logger.warn('progress notifications stopped: the response stream is closed', {
          requestId: this.options.requestId,
          error: error instanceof Error ? error.name : String(error),
        });
      }
    }
  }

  async #notificationFor(report: RunReport): Promise<OutgoingNotification | undefined> {
    if (report.kind === 'progress') {
      const { progressToken } = this.options;
      // "The progress value MUST increase with each notification": a report that does not is left out.
      if (progressToken === undefined || (this.#lastProgress !== undefined && report.progress <= this.#lastProgress)) return undefined;
      this.#lastProgress = report.progress;
      return { method: 'notifications/progress', params: { progressToken, ...progressFields(report) } };
    }
    if (!logLevelPasses(report.level, await this.#logThreshold())) return undefined;
    return {
      method: 'notifications/message',
      params: { level: report.level, ...(report.logger === undefined ? {} : { logger: report.logger }), data: report.data },
    };
  }

  #logThreshold(): Promise<LogLevel> {
    this.#threshold ??= this.options.logLevel().then(
      (level) => level ?? DEFAULT_LOG_LEVEL,
      (error: unknown) => {
        this.options.logger.warn('log level not read: the default applies', {
          requestId: this.options.requestId,
          error: error instanceof Error ? error.name : String(error),
        });
        return DEFAULT_LOG_LEVEL;
      },
    );
    return this.#threshold;
  }
}

function progressFields(report: Extract<RunReport, { kind: 'progress' }>): ProgressView {
  return {
    progress: report.progress,
    ...(report.total === undefined ? {} : { total: report.total }),
    ...(report.message === undefined ? {} : { message: report.message }),
  };
}
