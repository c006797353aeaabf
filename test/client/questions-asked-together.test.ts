/**
 * Two questions asked at once (a Parallel state), against the local stack's input fixtures:
 * in each async dialect the library lists both, with keys that stay the same from one read
 * to the next, answers each by its key, and a join handler answers both. And a question the
 * Tasks extension asks before its task exists, answered in `startToolCall`'s rounds.
 */
import { describe, expect, it, vi } from 'vitest';
import { answer, join, MemoryRequestStateStore, questions, startToolCall, status, type Answer, type Question } from '../../client/index.ts';
import { ASYNC_DIALECTS, localStackForFile } from './support/client-dialects.ts';

const stack = localStackForFile('test/fixtures/input-tools');

describe.concurrent.each(ASYNC_DIALECTS)('%s', (dialect) => {
  it('lists both open questions with stable keys, and answers each by its key', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(stack.url(), 'ask_two', {}, { store, dialect, canAnswer: true });
    const listed = await vi.waitFor(
      async () => {
        const current = await status(handle, { store });
        expect(current.questions?.map((q) => q.key).sort()).toEqual(['first', 'second']);
        return current.questions ?? [];
      },
      { interval: 300, timeout: 30_000 },
    );
    expect(listed.map((q) => q.message).sort()).toEqual(['First?', 'Second?']);
    expect((await questions(handle, { store })).map((q) => q.key).sort()).toEqual(['first', 'second']);

    await answer(handle, { action: 'accept', content: { value: 'b' } }, { store, key: 'second' });
    expect((await questions(handle, { store })).map((q) => q.key)).toEqual(['first']);
    await answer(handle, { action: 'accept', content: { value: 'a' } }, { store });
    const result = await join(handle, { store, timeoutMs: 60_000 });
    expect(result?.content).toEqual([{ type: 'text', text: 'first=a second=b' }]);
  });

  it('a join handler answers both', async () => {
    const store = new MemoryRequestStateStore();
    const seen: string[] = [];
    const onQuestion = (question: Question): Answer => {
      seen.push(question.key);
      return { action: 'accept', content: { value: question.key.toUpperCase() } };
    };
    const handle = await startToolCall(stack.url(), 'ask_two', {}, { store, dialect, onQuestion });
    const result = await join(handle, { store, onQuestion, timeoutMs: 60_000 });
    expect(result?.content).toEqual([{ type: 'text', text: 'first=FIRST second=SECOND' }]);
    expect(seen.sort()).toEqual(['first', 'second']);
  });
});

describe('tasks, a question asked before the task exists (askBeforeTaskSeconds)', () => {
  it("startToolCall's onQuestion answers the input_required round, and the retry returns the task", async () => {
    const store = new MemoryRequestStateStore();
    const onQuestion = (question: Question): Answer => {
      expect(question).toMatchObject({ key: 'user_name', message: 'What is your name?' });
      return { action: 'accept', content: { name: 'Alice' } };
    };
    const handle = await startToolCall(stack.url(), 'ask_before_task', { waitSeconds: 2 }, { store, dialect: 'tasks', onQuestion });
    expect(handle).toMatchObject({ dialect: 'tasks', remoteId: expect.any(String) });
    expect((await join(handle, { store, timeoutMs: 60_000 }))?.content).toEqual([{ type: 'text', text: 'Hello, Alice!' }]);
  });

  it('without a handler, a call that can answer only later says the round needs one', async () => {
    const call = startToolCall(stack.url(), 'ask_before_task', {}, { store: new MemoryRequestStateStore(), dialect: 'tasks', canAnswer: true });
    await expect(call).rejects.toThrow(/nothing here answers it: pass onQuestion/);
  });
});
