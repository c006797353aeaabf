/** Assertions on raw JSON-RPC answers, shared by the end-to-end suites. */
import { expect } from 'vitest';
import type { RawResponse } from './raw-mcp.ts';

/** The result of a response that must have succeeded. */
export function ok(response: RawResponse) {
  expect(response.message?.error).toBeUndefined();
  expect(response.message).toHaveProperty('result');
  return response.message!.result;
}

/** The error of a response that must have failed. */
export function rpcError(response: RawResponse) {
  expect(response.message?.error).toBeDefined();
  return response.message!.error!;
}
