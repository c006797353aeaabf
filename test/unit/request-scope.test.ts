import { describe, expect, it } from 'vitest';
import { finishBeforeResponse, setHttpHeader, setHttpStatus, withRequestScope } from '../../lambdas/mcp/edge/request-scope.ts';

const encoder = new TextEncoder();
const event = (message: unknown) => encoder.encode(`event: message\ndata: ${JSON.stringify(message)}\n\n`);

/** An SSE response whose events the test writes later, as the legacy transport does. */
function sseResponse() {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const body = new ReadableStream<Uint8Array>({
    start: (c) => {
      controller = c;
    },
  });
  return { response: new Response(body, { headers: { 'content-type': 'text/event-stream' } }), controller };
}

describe('withRequestScope', () => {
  it('turns an SSE answer into a JSON HTTP error when the handler asked for one before its response', async () => {
    const { response, controller } = sseResponse();
    const answer = await withRequestScope(async () => {
      setTimeout(() => {
        setHttpStatus(429);
        setHttpHeader('Retry-After', '7');
        controller.enqueue(event({ jsonrpc: '2.0', id: 1, error: { code: -32029, message: 'limit' } }));
        controller.close();
      }, 10);
      return response;
    });
    expect(answer.status).toBe(429);
    expect(answer.headers.get('retry-after')).toBe('7');
    expect(answer.headers.get('content-type')).toBe('application/json');
    expect(await answer.json()).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32029, message: 'limit' } });
  });

  it('releases an SSE stream at its first server message when that is no response, holding nothing back', async () => {
    const { response, controller } = sseResponse();
    const notification = { jsonrpc: '2.0', method: 'notifications/progress', params: { progress: 1 } };
    const answer = await withRequestScope(async () => {
      controller.enqueue(event(notification));
      return response;
    });
    // The stream is still open: the answer came with its headers, the notification readable at once.
    expect(answer.status).toBe(200);
    const reader = answer.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('notifications/progress');
    controller.enqueue(event({ jsonrpc: '2.0', id: 1, result: {} }));
    controller.close();
    expect(new TextDecoder().decode((await reader.read()).value)).toContain('"result"');
  });

  it('relays an SSE answer at once, holding back nothing, when the request cannot end in a status of its own (a poll)', async () => {
    const { response, controller } = sseResponse();
    // No message is on the stream yet: a held answer would not resolve.
    const answer = await withRequestScope(async () => response, { mayOverrideStatus: false });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    controller.enqueue(event({ jsonrpc: '2.0', id: 1, result: { status: 'working' } }));
    controller.close();
    expect(await answer.text()).toContain('"working"');
  });

  it('keeps a batch answer as it is: one message never makes the whole batch an HTTP error', async () => {
    const answer = await withRequestScope(
      async () => {
        setHttpStatus(429);
        return Response.json([{ jsonrpc: '2.0', id: 1, result: {} }]);
      },
      { batch: true },
    );
    expect(answer.status).toBe(200);
  });

  it('waits for work a notification handler registers after the SDK has answered 202', async () => {
    let finished = false;
    const answer = await withRequestScope(async () => {
      // As the SDK dispatches a notification: microtasks after its 202, past an async params check.
      void Promise.resolve().then(async () => {
        for (let i = 0; i < 5; i++) await Promise.resolve();
        finishBeforeResponse(
          new Promise<void>((resolve) =>
            setTimeout(() => {
              finished = true;
              resolve();
            }, 20),
          ),
        );
      });
      return new Response(null, { status: 202 });
    });
    expect(answer.status).toBe(202);
    expect(finished).toBe(true);
  });
});
