/**
 * Questions never lost (issue 47, scenarios 1 and 2), on the local stack: the
 * `operation.input_required` append is throttled through both of the recorder's tries, after
 * the question was stored. The state machine's asking state retries the worker's
 * Mcp.AskFailed, and the durable SDK retries askClient's step; either way the retried ask
 * finds its own question, so the run still waits for its one `approval` question, the event
 * is recorded, and the answer deploys.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { INPUT_REQUIRED, type QuestionEventFaults, throttleQuestionEvents } from '../support/question-event-throttle.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const CAN_ASK = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
const user = { authorization: 'Bearer questions-never-lost' };

let stack: LocalStack;
let faults: QuestionEventFaults;

beforeAll(async () => {
  stack = await startTestStack();
  faults = throttleQuestionEvents(stack.awsClients.dynamodb);
});
afterAll(async () => {
  await stack?.drainEvents();
  await stack?.close();
});

const rpc = (method: string, params: Record<string, unknown>) => modernRequest(stack.url, method, params, { headers: user, capabilities: CAN_ASK });

/** Polls the question events of `taskId` from `cursor` until one arrives. */
function questionEvents(taskId: string, cursor: string) {
  return vi.waitFor(
    async () => {
      const { events } = ok(await rpc('events/poll', { name: INPUT_REQUIRED, arguments: { operationId: taskId }, cursor }));
      expect(events.length).toBeGreaterThan(0);
      return events as Array<{ eventId: string; data: { inputRequests: Record<string, unknown> } }>;
    },
    { timeout: 60_000, interval: 200 },
  );
}

async function throttledQuestionWaits(tool: string) {
  const { cursor } = ok(await rpc('events/poll', { name: INPUT_REQUIRED, arguments: {}, cursor: null }));
  faults.left = 2;
  faults.injected = 0;
  const logs = captureLogs('event not appended');
  const { taskId } = ok(await rpc('tools/call', { name: tool, arguments: { environment: 'staging', changes: ['api: v2.3.1'] } }));
  const events = await questionEvents(taskId, cursor);
  expect(faults.injected).toBe(2);
  // The recorder gave up on the throttled append (both tries) and said so; the retried ask appended it.
  expect(logs.lines()).toEqual(['ERROR event not appended']);
  expect(logs.entries[0]).toMatchObject({ name: INPUT_REQUIRED, error: expect.stringContaining('ProvisionedThroughputExceededException') });
  expect(new Set(events.map((event) => event.eventId)).size).toBe(1);
  expect(Object.keys(events[0]?.data.inputRequests ?? {})).toEqual(['approval']);
  const waiting = await pollUntilStatus(() => rpc('tasks/get', { taskId }), ['input_required'], { timeout: 60_000 });
  expect(Object.keys(waiting.inputRequests)).toEqual(['approval']);
  ok(await rpc('tasks/update', { taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'after a throttle' } } } }));
  const done = await pollUntilStatus(() => rpc('tasks/get', { taskId }), ['completed', 'failed', 'cancelled'], { timeout: 60_000 });
  expect(done.status).toBe('completed');
  expect(done.result.structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: 'after a throttle' });
}

describe('questions never lost', () => {
  it('a question whose event cannot be written still waits for its answer', async () => {
    await throttledQuestionWaits('approve_deployment');
  }, 120_000);

  it("a durable tool's question retried after a failed event is stored once", async () => {
    await throttledQuestionWaits('approve_deployment_durable');
  }, 120_000);
});
