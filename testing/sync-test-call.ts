/**
 * A test's call in the `sync` dialect: a plain `tools/call` of the initialize era (2025-11-25),
 * as a client without async support makes it. The call's own response stream carries its
 * progress, its log lines (every level: the test's principal asks for `debug` first) and its
 * questions, each answered by a JSON-RPC response POSTed back, as such a client answers.
 */
import { randomUUID } from 'node:crypto';
import { type Answer, type CallProgress, type CallToolResult, checkAnswer, type Question } from '../client/index.ts';
import { askedIn, progressOf } from '../client/dialects/dialect-adapter.ts';
import { callDirect } from '../client/dialects/direct-call.ts';
import { McpConnection, type ServerRequest } from '../client/mcp-connection.ts';
import { LOG_LEVELS, type LogLevel } from '../lambdas/operations/operation.ts';

/** What a synchronous call reported on its stream. */
export interface SyncCallOutcome {
  result: CallToolResult;
  progress: CallProgress[];
  logs: Array<{ level: LogLevel; logger?: string; data: unknown }>;
}

/** Calls `tool` synchronously at `url`; `answer` answers each question the call asks on its stream. */
export async function callSynchronously(
  url: URL,
  tool: string,
  args: Record<string, unknown>,
  answer: (question: Question) => Promise<Answer>,
  signal: AbortSignal,
): Promise<SyncCallOutcome> {
  const connection = new McpConnection(url.href, { canAnswer: true });
  await connection.initialize(signal);
  // The level is the principal's, kept by the server: the test's calls all want every line.
  await connection.legacy('logging/setLevel', { level: 'debug' }, { signal });
  const progressToken = `progress-${randomUUID()}`;
  const progress: CallProgress[] = [];
  const logs: SyncCallOutcome['logs'] = [];
  const answering: Array<Promise<void>> = [];
  const onNotification = (method: string, params: Record<string, unknown>) => {
    if (method === 'notifications/progress' && params.progressToken === progressToken) {
      const report = progressOf(params);
      if (report) progress.push(report);
    } else if (method === 'notifications/message' && LOG_LEVELS.includes(params.level as LogLevel)) {
      logs.push({ level: params.level as LogLevel, ...(typeof params.logger === 'string' ? { logger: params.logger } : {}), data: params.data });
    }
  };
  const onRequest = (request: ServerRequest) => {
    const [asked] = askedIn([request]);
    if (!asked) return;
    const answered = (async () => {
      const reply = await answer(asked.question);
      checkAnswer(asked.question, reply);
      await connection.respond(request.id, { ...reply }, signal);
    })();
    // Awaited after the call; a failure meanwhile has aborted it through `signal`.
    answered.catch(() => undefined);
    answering.push(answered);
  };
  const id = `test-${randomUUID()}`;
  try {
    const result = await callDirect(connection, 'legacy', tool, args, { id, progressToken, onNotification, onRequest, signal });
    await Promise.all(answering);
    return { result, progress, logs };
  } catch (error) {
    // A call the test gave up on is cancelled, as a client cancels a request it no longer waits for.
    await connection.notify('notifications/cancelled', { requestId: id, reason: 'the test stopped waiting' }).catch(() => undefined);
    throw error;
  }
}
