/**
 * Closing the local stack loses no event already on its way: a run stopped just before the
 * close still reaches status sync, and its operation event still reaches the local
 * EventBridge endpoint, before that endpoint stops listening.
 */
import { describe, expect, it, vi } from 'vitest';
import { modernRequest } from '../support/raw-mcp.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const TASKS_EXTENSION = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

describe('closing the local stack', () => {
  it('delivers the operation event of a run canceled just before the close, instead of logging it as not delivered', async () => {
    const stack = await startTestStack();
    const logged: string[] = [];
    const capture = (stream: NodeJS.WriteStream) =>
      vi.spyOn(stream, 'write').mockImplementation((chunk: string | Uint8Array) => {
        logged.push(String(chunk));
        return true;
      });
    let spies: ReturnType<typeof capture>[] = [];
    try {
      const started = await modernRequest(
        stack.url,
        'tools/call',
        { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: 3600 } },
        { capabilities: TASKS_EXTENSION },
      );
      const taskId = started.message?.result?.task?.taskId ?? started.message?.result?.taskId;
      expect(typeof taskId).toBe('string');
      const canceled = await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: TASKS_EXTENSION });
      expect(canceled.message?.result?.resultType).toBe('complete');
      spies = [capture(process.stdout), capture(process.stderr)];
    } finally {
      await stack.close();
      for (const spy of spies) spy.mockRestore();
    }
    expect(logged.filter((line) => line.includes('not delivered to EventBridge'))).toEqual([]);
  });
});
