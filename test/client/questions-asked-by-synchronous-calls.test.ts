/**
 * A tool that runs only synchronously may ask before it returns: `startToolCall`'s
 * `onQuestion` answers it, on the call's own stream (initialize era) or through the
 * 2026-07-28 rounds (`input_required`, then the same call again with `inputResponses` and the
 * `requestState`), against the local stack's conformance tools.
 */
import { describe, expect, it } from 'vitest';
import { InvalidAnswerError, join, MemoryRequestStateStore, startToolCall, type Answer, type Question } from '../../client/index.ts';
import { ASYNC_DIALECTS, localStackForFile } from './support/client-dialects.ts';

const stack = localStackForFile('test/conformance/tools');

describe.concurrent.each(ASYNC_DIALECTS)('%s, a sync-only tool that asks', (dialect) => {
  it('onQuestion answers it before the call returns, and the result is kept with the handle', async () => {
    const store = new MemoryRequestStateStore();
    const asked: Question[] = [];
    const onQuestion = (question: Question): Answer => {
      asked.push(question);
      return { action: 'accept', content: { username: 'ada', email: 'ada@example.com' } };
    };
    const handle = await startToolCall(stack.url(), 'test_elicitation', { message: 'Who are you?' }, { store, dialect, onQuestion });
    expect(handle.dialect).toBe('sync');
    expect(asked).toEqual([expect.objectContaining({ key: 'user_info', message: 'Who are you?' })]);
    const result = await join(handle, { store });
    expect(result?.content).toEqual([{ type: 'text', text: 'User response: action=accept, content={"username":"ada","email":"ada@example.com"}' }]);
  });

  it('an answer that does not fit is refused before it is sent, naming the field, and the call stops without waiting out its bound', async () => {
    const onQuestion = (): Answer => ({ action: 'accept', content: { username: 'ada', email: 7 } });
    const started = Date.now();
    const call = startToolCall(stack.url(), 'test_elicitation', { message: 'Who?' }, { store: new MemoryRequestStateStore(), dialect, onQuestion });
    await expect(call).rejects.toSatisfy((error) => error instanceof InvalidAnswerError && error.field === 'email');
    // The tool waits 30 s (its syncTimeoutSeconds) for an answer that never comes.
    expect(Date.now() - started).toBeLessThan(20_000);
  }, 60_000);
});
