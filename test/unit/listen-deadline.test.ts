/** The invocation deadline a listen stream ends before: from the Lambda context, through the invocation. */
import { describe, expect, it } from 'vitest';
import { invocationDeadlineOf } from '../../lambdas/aws/function-url-adapter.ts';
import { invocationDeadline, withInvocationDeadline } from '../../lambdas/mcp/listen/listen-deadline.ts';

describe('invocation deadline', () => {
  it("is the Lambda context's remaining time from now, and none without a context", () => {
    const before = Date.now();
    const deadline = invocationDeadlineOf({ getRemainingTimeInMillis: () => 30_000 })!;
    expect(deadline).toBeGreaterThanOrEqual(before + 30_000);
    expect(deadline).toBeLessThan(Date.now() + 30_001);
    expect(invocationDeadlineOf(undefined)).toBeUndefined();
    expect(invocationDeadlineOf({ awsRequestId: 'r' })).toBeUndefined();
  });

  it('reaches work the invocation starts later (a stream body still being written)', async () => {
    const seen = await withInvocationDeadline(12_345, async () => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      return new Promise<number | undefined>((resolve) => setImmediate(() => resolve(invocationDeadline())));
    });
    expect(seen).toBe(12_345);
    expect(invocationDeadline()).toBeUndefined();
  });
});
