/**
 * A listen stream ends before its invocation's deadline even when a read is slow (issue 27,
 * item 3): the stream's end bounds each read cycle, not only the wait before it, so one read
 * that hangs near the end never carries the stream past the function's timeout (the client
 * would lose the graceful end, and the lease its release). Fake timers stand in for the 7 s.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { OperationKey, OperationRecord } from '../../lambdas/operations/operation.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { lambdaApp, listenEvent, type Invocation } from './listen-lambda-harness.ts';

const MARGIN_MS = 5000;
const SLOW_READ_MS = 7000;

/** A store whose reads take 7 s once the clock passes `slowFrom`: a throttled or unreachable table. */
class SlowReadStore extends InMemoryRecordStore {
  slowFrom = Infinity;
  override async get(key: OperationKey): Promise<OperationRecord | undefined> {
    if (Date.now() >= this.slowFrom) await new Promise((resolve) => setTimeout(resolve, SLOW_READ_MS));
    return super.get(key);
  }
}

afterEach(() => {
  vi.useRealTimers();
});

describe('listen stream near its deadline', () => {
  it("with one read that takes 7 s near the end, the stream still ends, gracefully, before the invocation's deadline", async () => {
    const store = new SlowReadStore();
    const { invoke, startJob } = lambdaApp({ store, listen: { deadlineMarginMs: MARGIN_MS, pollIntervalMs: 1000 } });
    const taskId = await startJob();

    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'] });
    const timeoutMs = 20_000;
    const endAt = Date.now() + timeoutMs - MARGIN_MS;
    // The read that starts in the stream's last second and a half would answer past the deadline.
    store.slowFrom = endAt - 1500;
    let listened: Invocation | undefined;
    const running = invoke(listenEvent(2, [taskId]), timeoutMs).then((done) => {
      listened = done;
    });
    for (let step = 0; step < 600 && !listened; step++) await vi.advanceTimersByTimeAsync(100);
    await running;

    expect(listened?.messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { resultType: 'complete', _meta: { 'io.modelcontextprotocol/subscriptionId': 2 } },
    });
    expect(listened?.returnedAt).toBeLessThan(listened?.deadline ?? 0);
  });
});
