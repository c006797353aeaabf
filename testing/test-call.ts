/**
 * One tool call of a test, through the client library as any client would make it: started in
 * the chosen dialect, its questions answered from the test's answers, joined to its end, then
 * its progress and log lines read from the operation the local stack kept for it.
 */
import {
  type Answer,
  type CallHandle,
  type CallProgress,
  type CallToolResult,
  cancel,
  type Dialect,
  join,
  MemoryRequestStateStore,
  type Question,
  startToolCall,
} from '../client/index.ts';
import type { LocalStack } from '../local/local-stack.ts';
import type { LogLevel, RunReport } from '../lambdas/operations/operation.ts';
import { ownerIdFor } from '../lambdas/operations/fingerprint.ts';
import { answerFor, type TestAnswers } from './test-answers.ts';

/** How long a call may take before it is cancelled and the test told. */
const DEFAULT_TIMEOUT_MS = 60_000;
/** The local stack's principal for requests without a bearer token (local-stack.ts). */
const LOCAL_OWNER = ownerIdFor('local');

/** The options of `TestServer.call`. */
export interface TestCallOptions {
  /** The dialect to call in. @default the best the server offers for the tool (the Tasks extension for an async tool) */
  dialect?: Exclude<Dialect, 'sync'>;
  /** The answers to the tool's questions, by key or from a function. Without them, a question fails the call. */
  answers?: TestAnswers;
  /** Cancel the call and reject when it has not ended by then. @default 60000 */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** A log line the tool reported (`reportLog`, or the report_progress worker's `{ level, logger?, data }`), at any level. */
export interface TestLogLine {
  level: LogLevel;
  logger?: string;
  data: unknown;
}

/** What a call did. */
export interface TestRun {
  /** The tool's result; a tool error is a result with `isError: true`. */
  result: CallToolResult;
  /** The dialect it ran in (`sync` when the tool runs only synchronously). */
  dialect: Dialect;
  /** The questions it asked, in order, with the answers they got. */
  questions: Array<Question & { answer: Answer }>;
  /** Its progress reports, in order. */
  progress: CallProgress[];
  /** Its log lines, in order, whatever their level. */
  logs: TestLogLine[];
  /** The client library's handle of the call (its id, dialect and the server's id for it). */
  handle: CallHandle;
}

/** Runs one call on `stack` to its end; `controller` aborts it (the server closing). */
export async function runTestCall(
  stack: LocalStack,
  tool: string,
  args: Record<string, unknown>,
  options: TestCallOptions,
  controller: AbortController,
): Promise<TestRun> {
  const signal = options.signal ? AbortSignal.any([options.signal, controller.signal]) : controller.signal;
  const store = new MemoryRequestStateStore();
  const questions: TestRun['questions'] = [];
  const statusProgress: CallProgress[] = [];
  const reports = new Map<number, RunReport>();
  let handle: CallHandle | undefined;

  const readReports = async () => {
    if (!handle?.remoteId) return;
    const record = await stack.app.operations.readCurrent({ ownerId: LOCAL_OWNER, token: handle.remoteId }).catch(() => undefined);
    for (const report of record?.reports ?? []) reports.set(report.seq, report);
  };
  const onQuestion = async (question: Question) => {
    try {
      const answer = await answerFor(question, options.answers);
      questions.push({ ...question, answer });
      return answer;
    } catch (error) {
      // The call must fail now, whatever the library does with a handler's error: stop its join.
      controller.abort(error);
      throw error;
    }
  };
  const onStatus = (status: { progress?: CallProgress }) => {
    const last = statusProgress.at(-1);
    if (status.progress && JSON.stringify(status.progress) !== JSON.stringify(last)) statusProgress.push(status.progress);
    void readReports();
  };

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  try {
    handle = await startToolCall(stack.url, tool, args, {
      store,
      ...(options.dialect ? { dialect: options.dialect } : {}),
      onQuestion,
      onStatus,
      signal,
    });
    const result = await join(handle, { store, onQuestion, onStatus, signal, timeoutMs });
    if (!result) throw new Error(`${tool} did not end within ${timeoutMs} ms (timeoutMs); it was cancelled`);
    await readReports();
    return { result, dialect: handle.dialect, questions, ...runReports(reports, statusProgress), handle };
  } catch (error) {
    if (handle) await cancel(handle, { store }).catch(() => undefined);
    throw signal.aborted && signal.reason instanceof Error ? signal.reason : error;
  }
}

/** Progress and logs from the operation's reports; a call with no operation (a synchronous one) has only the progress it was sent. */
function runReports(reports: Map<number, RunReport>, statusProgress: CallProgress[]): Pick<TestRun, 'progress' | 'logs'> {
  if (reports.size === 0) return { progress: statusProgress, logs: [] };
  const progress: CallProgress[] = [];
  const logs: TestLogLine[] = [];
  for (const report of [...reports.values()].sort((a, b) => a.seq - b.seq)) {
    if (report.kind === 'progress') {
      progress.push({
        progress: report.progress,
        ...(report.total === undefined ? {} : { total: report.total }),
        ...(report.message === undefined ? {} : { message: report.message }),
      });
    } else {
      logs.push({ level: report.level, ...(report.logger === undefined ? {} : { logger: report.logger }), data: report.data });
    }
  }
  return { progress, logs };
}
