/**
 * The client library answers a tool's question through a handler, against the local stack:
 * in each async dialect, for the state-machine tool and its durable twin, `join` with
 * `onQuestion` reads the question, sends the handler's answer and goes on to the result. A
 * call that declares it can answer nothing is never asked, and its tool failure reads
 * `failed` in the store as it does for `join`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join, list, MemoryRequestStateStore, startToolCall, type Answer, type Question } from '../../client/index.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const;
const TOOLS = ['approve_deployment', 'approve_deployment_durable'] as const;
const ARGS = { environment: 'staging', changes: ['api: v2.3.1', 'web: v1.8.0'] };
const CASES = DIALECTS.flatMap((dialect) => TOOLS.map((tool) => [dialect, tool] as const));

let stack: LocalStack;
let url: string;
beforeAll(async () => {
  stack = await startTestStack();
  url = stack.url.href;
}, 60_000);
afterAll(async () => {
  await stack?.close();
});

describe.concurrent.each(CASES)('%s, %s', (dialect, tool) => {
  it('a handler that accepts: the changes are deployed, with its comment', async () => {
    const store = new MemoryRequestStateStore();
    const asked: Question[] = [];
    const onQuestion = (question: Question): Answer => {
      asked.push(question);
      return { action: 'accept', content: { comment: `ship it (${dialect})` } };
    };
    const handle = await startToolCall(url, tool, ARGS, { store, dialect, onQuestion });
    expect(handle).toMatchObject({ dialect, canAnswer: true });
    const result = await join(handle, { store, onQuestion, timeoutMs: 60_000 });
    expect(result?.structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: `ship it (${dialect})` });
    expect(asked).toEqual([
      {
        key: 'approval',
        message: 'Deploy 2 changes to staging?\n1. api: v2.3.1\n2. web: v1.8.0',
        requestedSchema: expect.objectContaining({ type: 'object', properties: { comment: expect.objectContaining({ type: 'string' }) } }),
      },
    ]);
  });

  it('a handler that declines: nothing is deployed', async () => {
    const store = new MemoryRequestStateStore();
    const onQuestion = (): Answer => ({ action: 'decline' });
    const handle = await startToolCall(url, tool, ARGS, { store, dialect, onQuestion });
    const result = await join(handle, { store, onQuestion, timeoutMs: 60_000 });
    expect(result?.structuredContent).toMatchObject({ deployed: false, decision: 'decline' });
  });
});

describe.concurrent.each(DIALECTS)('%s, a call that cannot answer', (dialect) => {
  it('declares no elicitation, so the tool fails for want of it; list shows failed, as join reports it', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, 'approve_deployment', ARGS, { store, dialect });
    expect(handle.canAnswer).toBeUndefined();
    const result = await join(handle, { store, timeoutMs: 60_000 });
    expect(result).toMatchObject({ isError: true });
    expect(JSON.stringify(result?.content)).toContain('Mcp.CapabilityMissing');
    const [listed] = await list({ store });
    expect(listed?.lastStatus?.state).toBe('failed');
  });
});
