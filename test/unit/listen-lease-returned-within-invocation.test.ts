/**
 * A listen stream gives its lease back within its own invocation (issue 27, item 2): Lambda
 * freezes whatever is still pending once the handler has returned, so a release left to run
 * after it would hold the lease until it expired, and a client at the stream cap that
 * re-listens, as it is told to, would be refused.
 */
import { describe, expect, it } from 'vitest';
import { toWebRequest } from '../../lambdas/aws/function-url-adapter.ts';
import { LISTEN_DEFAULTS } from '../../lambdas/mcp/listen/listen-handler.ts';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { lambdaApp, listenEvent, messagesOf, PRINCIPAL } from './listen-lambda-harness.ts';

const MARGIN_MS = 5000;
const RELEASE_MS = 50;

/** A store whose slot releases take a DynamoDB round trip's time or more. */
class SlowReleaseStore extends InMemoryRecordStore {
  override async releaseActiveSlot(ownerId: string, token: string, requestId?: string): Promise<void> {
    await new Promise((resolve) => setTimeout(resolve, RELEASE_MS));
    return super.releaseActiveSlot(ownerId, token, requestId);
  }
}

/** Reads a stream's body until its first message, keeping it open; a refusal is its JSON body. */
async function untilFirstMessage(response: Response) {
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    return { first: { status: response.status, ...(await response.json()) }, close: async () => undefined };
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (messagesOf(text).length === 0) {
    const chunk = await reader.read();
    if (chunk.done) break;
    text += decoder.decode(chunk.value, { stream: true });
  }
  return { first: messagesOf(text)[0], close: () => reader.cancel() };
}

describe('listen lease in the Lambda handler', () => {
  it('with a release that takes 50 ms, no lease is held when the handler returns, and an immediate re-listen at the cap is acknowledged', async () => {
    const store = new SlowReleaseStore();
    const { app, invoke, startJob } = lambdaApp({ store, listen: { deadlineMarginMs: MARGIN_MS, pollIntervalMs: 200 } });
    const taskId = await startJob();
    const cap = LISTEN_DEFAULTS.maxStreamsPerPrincipal;
    const listen = (id: number) => app.fetch(toWebRequest(listenEvent(id, [taskId])), PRINCIPAL).then(untilFirstMessage);
    const leases = () => store.listActiveSlots(`listen.${ownerIdFor(PRINCIPAL)}`);

    // The principal's other streams stay open throughout: the one under test takes the last slot.
    const others = await Promise.all(Array.from({ length: cap - 1 }, (_, n) => listen(100 + n)));
    try {
      expect(others.map((other) => other.first.method)).toEqual(Array(cap - 1).fill('notifications/subscriptions/acknowledged'));

      const listened = await invoke(listenEvent(2, [taskId]), MARGIN_MS + 800);
      expect(listened.messages[0]).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
      expect(listened.messages.at(-1)).toMatchObject({ id: 2, result: { resultType: 'complete' } });
      expect(await leases()).toHaveLength(cap - 1);

      const again = await listen(3);
      try {
        expect(again.first).toMatchObject({ method: 'notifications/subscriptions/acknowledged', params: { notifications: { taskIds: [taskId] } } });
      } finally {
        await again.close();
      }
    } finally {
      await Promise.all(others.map((other) => other.close()));
    }
  });
});
