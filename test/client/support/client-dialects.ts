/**
 * What the client tests run their scenarios over: the dialects a call can be forced into, and
 * one local stack per test file, started before its tests and closed after them.
 */
import { afterAll, beforeAll } from 'vitest';
import type { LocalStack } from '../../../local/local-stack.ts';
import { startTestStack } from '../../support/local-stack-fixture.ts';

/** The dialects `startToolCall` can be forced into: the 2026-07-28 Tasks extension, 2025-11-25 tasks and SEP-1391. */
export const ASYNC_DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const;

/** The file's stack serving `toolsDir`; `url()` is its MCP endpoint once `beforeAll` has run. */
export function localStackForFile(toolsDir: string): { url(): string } {
  let stack: LocalStack | undefined;
  beforeAll(async () => {
    stack = await startTestStack({ toolsDir });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });
  return {
    url() {
      if (!stack) throw new Error('the local stack is not started yet: read url() inside a test');
      return stack.url.href;
    },
  };
}
