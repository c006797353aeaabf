/**
 * A question asked from a Map iteration whose first ask fails, on the local stack: the
 * `operation.input_required` append of the first iteration's question is throttled through
 * both of the recorder's tries, after the question was stored, so the worker fails its state
 * with Mcp.AskFailed and the state's retrier runs it again with a new task token. The retry
 * takes over its iteration's question: the client sees one `confirm` question, its answer
 * resumes the iteration, and the next iteration asks under `confirm-2`.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { INPUT_REQUIRED, type QuestionEventFaults, throttleQuestionEvents } from '../support/question-event-throttle.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const CAN_ASK = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const user = { authorization: 'Bearer questions-retried-in-a-map' };

let stack: LocalStack;
let faults: QuestionEventFaults;

beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/fixtures/map-question-tools' });
  faults = throttleQuestionEvents(stack.awsClients.dynamodb);
});
afterAll(async () => {
  await stack?.drainEvents();
  await stack?.close();
});

const rpc = (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { headers: user, capabilities: CAN_ASK });

/** The messages of the questions `taskId` shows, by key, once `keys` are the ones it shows. */
async function questionsOnceAsked(taskId: string, keys: string[]): Promise<Record<string, string>> {
  return vi.waitFor(
    async () => {
      const waiting = ok(await rpc('tasks/get', { taskId }));
      const shown = Object.fromEntries(
        Object.entries((waiting.inputRequests ?? {}) as Record<string, { params: { message: string } }>).map(([key, request]) => [key, request.params.message]),
      );
      expect(Object.keys(shown).sort()).toEqual(keys);
      return shown;
    },
    { timeout: 60_000, interval: 200 },
  );
}

describe('questions retried in a Map iteration', () => {
  it("a retried ask in a Map iteration takes over its iteration's question: the client sees one question per iteration, each answer resumes it", async () => {
    const { cursor } = ok(await rpc('events/poll', { name: INPUT_REQUIRED, arguments: {}, cursor: null }));
    faults.left = 2;
    faults.injected = 0;
    const logs = captureLogs('event not appended');
    const { taskId } = ok(await rpc('tools/call', { name: 'confirm_each', arguments: {} }));
    // The retried attempt records the question's event: from then on the question is its own.
    const events = await vi.waitFor(
      async () => {
        const { events } = ok(await rpc('events/poll', { name: INPUT_REQUIRED, arguments: { operationId: taskId }, cursor }));
        expect(events.length).toBeGreaterThan(0);
        return events as Array<{ data: { inputRequests: Record<string, unknown> } }>;
      },
      { timeout: 60_000, interval: 200 },
    );
    expect(faults.injected).toBe(2);
    // The recorder gave up on the throttled append (both tries) and said so; the retried ask appended it.
    expect(logs.lines()).toEqual(['ERROR event not appended']);
    expect(Object.keys(events[0]?.data.inputRequests ?? {})).toEqual(['confirm']);
    expect(await questionsOnceAsked(taskId, ['confirm'])).toEqual({ confirm: 'Deploy api?' });

    ok(await rpc('tasks/update', { taskId, inputResponses: { confirm: { action: 'accept', content: {} } } }));
    expect(await questionsOnceAsked(taskId, ['confirm-2'])).toEqual({ 'confirm-2': 'Deploy web?' });
    ok(await rpc('tasks/update', { taskId, inputResponses: { 'confirm-2': { action: 'accept', content: {} } } }));

    const done = await pollUntilStatus(() => rpc('tasks/get', { taskId }), ['completed', 'failed', 'cancelled'], { timeout: 60_000 });
    expect(done.status).toBe('completed');
    expect(done.result.content).toEqual([{ type: 'text', text: 'api=accept web=accept' }]);
  }, 120_000);
});
