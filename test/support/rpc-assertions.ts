/** Assertions on raw JSON-RPC answers, shared by the end-to-end suites. */
import { expect, vi } from 'vitest';
import type { RawResponse } from './raw-mcp.ts';

/** The result of a response that must have succeeded. */
export function ok(response: RawResponse) {
  expect(response.message?.error).toBeUndefined();
  expect(response.message).toHaveProperty('result');
  return response.message?.result;
}

/** The error of a response that must have failed. */
export function rpcError(response: RawResponse) {
  expect(response.message?.error).toBeDefined();
  const error = response.message?.error;
  if (!error) throw new Error('the response has no error');
  return error;
}

export interface PollOptions {
  /** Milliseconds between reads. @default 100 */
  interval?: number;
  /** Milliseconds before giving up with the last read's failure. @default 30_000 */
  timeout?: number;
}

/**
 * Reads a status the way a client polls, until its `status` is one of `statuses`, and
 * returns that result. A read that keeps failing, or a status that never arrives, fails
 * with the last read's assertion.
 */
export function pollUntilStatus(read: () => Promise<RawResponse>, statuses: readonly string[], options: PollOptions = {}) {
  return vi.waitFor(
    async () => {
      const result = ok(await read());
      expect(statuses).toContain(result.status);
      return result;
    },
    { interval: options.interval ?? 100, timeout: options.timeout ?? 30_000 },
  );
}
