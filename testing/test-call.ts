/**
 * One tool call of a test, through the client library as any client would make it: started in
 * the chosen dialect, polled to its end with its questions answered from the test's answers,
 * then its progress and log lines read from the operation the local stack kept for it.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type Answer,
  type CallHandle,
  type CallProgress,
  type CallToolResult,
  type CallStatus,
  cancel,
  type Dialect,
  isTerminal,
  join,
  MemoryRequestStateStore,
  type Question,
  answer,
  questions as openQuestions,
  startToolCall,
  status,
} from '../client/index.ts';
import type { LocalStack } from '../local/local-stack.ts';
import type { LogLevel, RunReport } from '../lambdas/operations/operation.ts';
import { ownerIdFor } from '../lambdas/operations/fingerprint.ts';
import { callSynchronously } from './sync-test-call.ts';
import { answerFor, type TestAnswers } from './test-answers.ts';

/** How often the kit reads a running call's status. */
const POLL_MS = 100;
/** How long a call may take before it is cancelled and the test told. */
const DEFAULT_TIMEOUT_MS = 60_000;
/** The local stack's principal for requests without a bearer token (local-stack.ts). */
const LOCAL_OWNER = ownerIdFor('local');

/** The options of `TestServer.call`. */
export interface TestCallOptions {
  /**
   * The dialect to call in: an async one, or `sync`, a plain initialize-era `tools/call` as a
   * client without async support makes it (for tools whose invocation is `sync` or `both`).
   * @default the best the server offers for the tool (the Tasks extension for an async tool)
   */
  dialect?: Dialect;
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
      // The call fails now, wherever the question was asked (a synchronous call's stream too).
      controller.abort(error);
      throw error;
    }
  };
  const onStatus = (current: Pick<CallStatus, 'progress'>) => {
    const last = statusProgress.at(-1);
    if (current.progress && JSON.stringify(current.progress) !== JSON.stringify(last)) statusProgress.push(current.progress);
    void readReports();
  };

  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  if (options.dialect === 'sync') {
    const timeout = AbortSignal.timeout(timeoutMs);
    const bounded = AbortSignal.any([signal, timeout]);
    try {
      const outcome = await callSynchronously(stack.url, tool, args, onQuestion, bounded);
      const id = randomUUID();
      return { ...outcome, dialect: 'sync', questions, handle: { id, url: stack.url.href, dialect: 'sync', tool, createdAt: new Date().toISOString() } };
    } catch (error) {
      if (signal.aborted && signal.reason instanceof Error) throw signal.reason;
      if (timeout.aborted) throw new Error(`${tool} did not end within ${timeoutMs} ms (timeoutMs)`, { cause: error });
      throw error;
    }
  }
  try {
    handle = await startToolCall(stack.url, tool, args, {
      store,
      ...(options.dialect ? { dialect: options.dialect } : {}),
      // Also declares the elicitation capability, and answers a call that runs synchronously.
      onQuestion,
      onStatus,
      signal,
    });
    await untilEnded(
      handle,
      store,
      onQuestion,
      onStatus,
      Date.now() + timeoutMs,
      signal,
      () => `${tool} did not end within ${timeoutMs} ms (timeoutMs); it was cancelled`,
    );
    const result = await join(handle, { store, signal });
    if (!result) throw new Error(`${tool} ended without a result`);
    await readReports();
    return { result, dialect: handle.dialect, questions, ...runReports(reports, statusProgress), handle };
  } catch (error) {
    if (handle) await cancel(handle, { store }).catch(() => undefined);
    throw signal.aborted && signal.reason instanceof Error ? signal.reason : error;
  }
}

/**
 * Polls the call's status until it ends, answering each question once (a key names one
 * question for the operation's whole life). The kit polls on its own cadence, not the
 * server's suggested interval (5 s by default), which `join` keeps: a test waits for a
 * question or an end a tenth of a second at most.
 */
async function untilEnded(
  handle: CallHandle,
  store: MemoryRequestStateStore,
  onQuestion: (question: Question) => Promise<Answer>,
  onStatus: (status: CallStatus) => void,
  deadline: number,
  signal: AbortSignal,
  timedOut: () => string,
): Promise<void> {
  const answered = new Set<string>();
  for (;;) {
    const current = await status(handle, { store, signal });
    onStatus(current);
    if (isTerminal(current.state)) return;
    if (current.state === 'input_required') {
      for (const question of current.questions ?? (await openQuestions(handle, { store, signal }))) {
        if (answered.has(question.key)) continue;
        answered.add(question.key);
        await answer(handle, await onQuestion(question), { store, key: question.key, signal });
      }
    }
    if (Date.now() >= deadline) throw new Error(timedOut());
    await sleep(POLL_MS, undefined, { signal });
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
