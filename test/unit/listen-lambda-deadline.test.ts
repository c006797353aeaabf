/**
 * A listen stream in the Lambda handler's shape (streamingFunctionUrlHandler with the
 * invocation's deadline, as lambdas/handlers/mcp-http.ts wires it), over in-memory ports:
 * it ends cleanly before the invocation's remaining time runs out, with no wake-up signal
 * (AWS has none), and the client can listen again.
 */
import { describe, expect, it } from 'vitest';
import { lambdaApp, listenEvent } from './listen-lambda-harness.ts';

const MARGIN_MS = 5000;

describe('listen in the Lambda handler', () => {
  it("ends cleanly before the invocation's remaining time runs out, and a re-listen is acknowledged again", async () => {
    const { invoke, startJob, preludes } = lambdaApp({ listen: { deadlineMarginMs: MARGIN_MS, pollIntervalMs: 200 } });
    const taskId = await startJob();

    for (const id of [2, 3]) {
      const listened = await invoke(listenEvent(id, [taskId]), MARGIN_MS + 800);
      expect(preludes.at(-1)).toMatchObject({ statusCode: 200, headers: { 'content-type': 'text/event-stream', 'x-accel-buffering': 'no' } });
      expect(listened.messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
      expect(listened.messages[1]).toMatchObject({ method: 'notifications/tasks', params: { taskId, status: 'working' } });
      expect(listened.messages.at(-1)).toEqual({
        jsonrpc: '2.0',
        id,
        result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': id } },
      });
      // The stream ended on its own, with the margin still left on the invocation.
      expect(listened.deadline - listened.returnedAt).toBeGreaterThan(MARGIN_MS / 2);
    }
  });
});
