/** The invocation deadline a listen stream ends before: from the Lambda context, through the invocation. */
import { describe, expect, it } from 'vitest';
import { invocationDeadlineOf } from '../../lambdas/aws/function-url-adapter.ts';
import { finishWithinInvocation, invocationDeadline, withInvocationDeadline } from '../../lambdas/mcp/listen/listen-deadline.ts';

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

  it('returns only once the work registered in it has settled (Lambda freezes what is still pending)', async () => {
    const settled: string[] = [];
    const later = (ms: number, name: string, fail = false) =>
      new Promise<void>((resolve, reject) =>
        setTimeout(() => {
          settled.push(name);
          if (fail) reject(new Error(name));
          else resolve();
        }, ms),
      );
    await withInvocationDeadline(undefined, async () => {
      finishWithinInvocation(later(20, 'release'));
      finishWithinInvocation(later(10, 'failed release', true));
    });
    expect(settled.sort()).toEqual(['failed release', 'release']);
  });
});
