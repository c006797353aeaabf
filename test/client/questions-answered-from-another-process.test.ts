/**
 * A detached call answered later from another process, against the local stack: started
 * with `canAnswer` and no handler, it waits in `input_required`; a fresh
 * `FileRequestStateStore` on the same directory (another process, after a restart) lists its
 * question and answers it by the call's id, and the call completes. An answer that does not
 * fit the requested schema is refused before anything is sent. In each async dialect, for the
 * state-machine tool and its durable twin.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { answer, FileRequestStateStore, InvalidAnswerError, join, questions, startToolCall, status, type FetchLike } from '../../client/index.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const;
const TOOLS = ['approve_deployment', 'approve_deployment_durable'] as const;
const ARGS = { environment: 'prod', changes: ['api: v2.4.0'] };
const CASES = DIALECTS.flatMap((dialect) => TOOLS.map((tool) => [dialect, tool] as const));
const QUESTION = {
  key: 'approval',
  message: 'Deploy 1 change to prod?\n1. api: v2.4.0',
  requestedSchema: expect.objectContaining({ type: 'object', properties: { comment: expect.objectContaining({ type: 'string', maxLength: 500 }) } }),
};

let stack: LocalStack;
let url: string;
let stateDir: string;
beforeAll(async () => {
  stack = await startTestStack();
  url = stack.url.href;
  stateDir = await mkdtemp(joinPath(tmpdir(), 'async-mcp-questions-'));
}, 60_000);
afterAll(async () => {
  await stack?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

/** A fetch that records each JSON-RPC message it sends, to see what an operation put on the wire. */
function recordingFetch(): { fetch: FetchLike; sent: Array<Record<string, unknown>> } {
  const sent: Array<Record<string, unknown>> = [];
  return {
    sent,
    fetch: (input, init) => {
      if (typeof init.body === 'string') sent.push(JSON.parse(init.body) as Record<string, unknown>);
      return fetch(input, init);
    },
  };
}

describe.concurrent.each(CASES)('%s, %s', (dialect, tool) => {
  it('started with canAnswer and no handler, it waits in input_required; another process lists the question, a wrong answer is refused unsent, and its answer completes the call', async () => {
    const handle = await startToolCall(url, tool, ARGS, { store: new FileRequestStateStore(stateDir), dialect, canAnswer: true });
    expect(handle).toMatchObject({ dialect, canAnswer: true });

    // Joining without a handler returns at its timeout: the question waits for an answer.
    expect(await join(handle.id, { store: new FileRequestStateStore(stateDir), timeoutMs: 1_500 })).toBeUndefined();
    const waiting = await vi.waitFor(
      async () => {
        const current = await status(handle.id, { store: new FileRequestStateStore(stateDir) });
        expect(current.state).toBe('input_required');
        return current;
      },
      { interval: 300, timeout: 30_000 },
    );
    expect(waiting.questions).toEqual([QUESTION]);

    // Another process: a fresh store on the same directory, only the id in hand.
    const elsewhere = new FileRequestStateStore(stateDir);
    expect(await questions(handle.id, { store: elsewhere })).toEqual([QUESTION]);

    const { fetch, sent } = recordingFetch();
    const wrong = answer(handle.id, { action: 'accept', content: { comment: 42 } }, { store: elsewhere, fetch, key: 'approval' });
    await expect(wrong).rejects.toBeInstanceOf(InvalidAnswerError);
    await expect(wrong).rejects.toMatchObject({ field: 'comment', question: 'approval' });
    // Only reads went out: no JSON-RPC response, no tasks/update.
    expect(sent.filter((m) => 'result' in m || m.method === 'tasks/update')).toEqual([]);
    expect(await questions(handle.id, { store: elsewhere })).toEqual([QUESTION]);

    await expect(answer(handle.id, { action: 'decline' }, { store: elsewhere, key: 'no-such-question' })).rejects.toThrow(
      /no open question "no-such-question"/,
    );

    const after = await answer(handle.id, { action: 'accept', content: { comment: `from elsewhere (${dialect})` } }, { store: elsewhere });
    expect(after.state).not.toBe('input_required');
    const result = await join(handle.id, { store: new FileRequestStateStore(stateDir), timeoutMs: 60_000 });
    expect(result?.structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: `from elsewhere (${dialect})` });
    await expect(answer(handle.id, { action: 'decline' }, { store: elsewhere })).rejects.toThrow(/has ended: it has no open question/);
  });
});

describe('declaring the capability', () => {
  it.each(DIALECTS)('%s: a call without canAnswer or onQuestion declares no elicitation on the wire', async (dialect) => {
    const { fetch, sent } = recordingFetch();
    const store = new FileRequestStateStore(stateDir);
    const handle = await startToolCall(url, 'approve_deployment', ARGS, { store, dialect, fetch });
    await join(handle, { store, fetch, timeoutMs: 60_000 });
    expect(sent.length).toBeGreaterThan(0);
    expect(JSON.stringify(sent)).not.toContain('elicitation');
  });

  it.each(DIALECTS)('%s: a call with canAnswer declares elicitation in form mode, and so do joins from another process', async (dialect) => {
    const started = recordingFetch();
    const handle = await startToolCall(url, 'approve_deployment', ARGS, {
      store: new FileRequestStateStore(stateDir),
      dialect,
      canAnswer: true,
      fetch: started.fetch,
    });
    expect(JSON.stringify(started.sent)).toContain('"elicitation":{"form":{}}');
    const joined = recordingFetch();
    await join(handle.id, { store: new FileRequestStateStore(stateDir), fetch: joined.fetch, timeoutMs: 200 });
    // The 2025-11-25 dialect carries it in the session the server signed at initialize, not in each request.
    if (dialect === 'tasks-2025-11-25') expect(handle.sessionId).toEqual(expect.any(String));
    else expect(JSON.stringify(joined.sent)).toContain('"elicitation":{"form":{}}');
    await answer(handle.id, { action: 'cancel' }, { store: new FileRequestStateStore(stateDir) }).catch(() => undefined);
  });
});
