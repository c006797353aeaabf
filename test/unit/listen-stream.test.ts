/**
 * The listen stream on its own (lambdas/mcp/listen/listen-stream.ts): what it writes, when
 * it reads, and how it ends, over a hand-fed item.
 */
import { describe, expect, it } from 'vitest';
import { listenStream, type ListenStreamPlan, type WatchedState } from '../../lambdas/mcp/listen/listen-stream.ts';
import { createStatusSignal } from '../../lambdas/operations/status-signal.ts';

const quiet = { debug() {}, info() {}, warn() {}, error() {} };

function state(status: string, terminal = false): WatchedState {
  return { params: { taskId: 't1', status }, change: status, terminal };
}

function plan(overrides: Partial<ListenStreamPlan>): ListenStreamPlan {
  return {
    subscriptionId: 9,
    acknowledged: { taskIds: ['t1'] },
    method: 'notifications/tasks',
    initial: [{ id: 't1', state: state('working') }],
    read: async () => state('working'),
    endAtMs: Date.now() + 60_000,
    pollIntervalMs: 60_000,
    keepAliveMs: 60_000,
    onEnd: async () => undefined,
    logger: quiet,
    ...overrides,
  };
}

/** Reads frames until the stream closes (or `until` says stop), as text. */
async function frames(response: Response, until?: (text: string) => boolean): Promise<string> {
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  for (;;) {
    const chunk = await reader.read();
    if (chunk.done) return text;
    text += decoder.decode(chunk.value);
    if (until?.(text)) {
      await reader.cancel();
      return text;
    }
  }
}

const messagesOf = (text: string) =>
  text
    .split('\n')
    .filter((line) => line.startsWith('data: '))
    .map((line) => JSON.parse(line.slice(6)));

describe('listen stream', () => {
  it('a wake-up signal makes the stream read at once, long before its interval', async () => {
    const wake = createStatusSignal();
    let current = state('working');
    const started = Date.now();
    const response = listenStream(plan({ wake, read: async () => current }));
    setTimeout(() => {
      current = state('completed', true);
      wake.notify();
    }, 50);
    const messages = messagesOf(await frames(response));
    expect(messages.map((m) => m.method ?? 'result')).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
      'notifications/tasks',
      'result',
    ]);
    expect(messages[2].params).toMatchObject({ status: 'completed', _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } });
    expect(Date.now() - started).toBeLessThan(30_000);
  });

  it('without a signal it reads at its interval and notifies only on a change', async () => {
    const reads: string[] = [];
    const sequence = [state('working'), state('working'), state('completed', true)];
    const response = listenStream(
      plan({
        pollIntervalMs: 20,
        read: async () => {
          reads.push('read');
          return sequence.shift() ?? state('completed', true);
        },
      }),
    );
    const messages = messagesOf(await frames(response));
    expect(reads).toHaveLength(3);
    expect(messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status)).toEqual(['working', 'completed']);
  });

  it('sends a keep-alive SSE comment while nothing changes, with X-Accel-Buffering: no', async () => {
    const response = listenStream(plan({ keepAliveMs: 20 }));
    expect(response.headers.get('x-accel-buffering')).toBe('no');
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await frames(response, (text) => text.includes(': keepalive'))).toContain(': keepalive\n\n');
  });

  it('ends with the listen result at its end time, and gives its lease back once', async () => {
    let ended = 0;
    const response = listenStream(plan({ pollIntervalMs: 10, endAtMs: Date.now() + 100, onEnd: async () => void ended++ }));
    const messages = messagesOf(await frames(response));
    expect(messages.at(-1)).toEqual({ jsonrpc: '2.0', id: 9, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } } });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(1);
  });

  it('a client that goes away ends the stream and gives its lease back', async () => {
    let ended = 0;
    const response = listenStream(plan({ onEnd: async () => void ended++ }));
    await frames(response, (text) => text.includes('notifications/tasks'));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(ended).toBe(1);
  });

  it('a failed read is tried again at the next interval, not the end of the stream', async () => {
    let calls = 0;
    const response = listenStream(
      plan({
        pollIntervalMs: 10,
        read: async () => {
          calls++;
          if (calls === 1) throw new Error('throttled');
          return state('completed', true);
        },
      }),
    );
    const messages = messagesOf(await frames(response));
    expect(messages.filter((m) => m.method === 'notifications/tasks').map((m) => m.params.status)).toEqual(['working', 'completed']);
  });

  it('a read that never answers still lets the stream end at its end time, with the listen result, and give its lease back', async () => {
    let ended = 0;
    const response = listenStream(
      plan({ pollIntervalMs: 10, endAtMs: Date.now() + 100, read: () => new Promise<never>(() => undefined), onEnd: async () => void ended++ }),
    );
    const messages = messagesOf(await frames(response));
    expect(messages.at(-1)).toEqual({ jsonrpc: '2.0', id: 9, result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 9 } } });
    expect(ended).toBe(1);
  });
});
