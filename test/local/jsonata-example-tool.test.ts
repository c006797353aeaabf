/**
 * The JSONata example tool, summarize_numbers, end to end: the real local stack (loader,
 * facade, worker, status sync) driven over MCP with the Tasks extension.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

async function summarize(numbers: number[]) {
  const created = ok(await modernRequest(stack.url, 'tools/call', { name: 'summarize_numbers', arguments: { numbers } }, { capabilities: EXT }));
  expect(created.resultType).toBe('task');
  const done = await pollUntilStatus(
    () => modernRequest(stack.url, 'tasks/get', { taskId: created.taskId }, { capabilities: EXT }),
    ['completed', 'failed', 'cancelled'],
  );
  expect(done.status).toBe('completed');
  return done.result;
}

describe('summarize_numbers (a JSONata tool)', () => {
  it('returns count, sum, mean (from the calculate worker), min, max and root mean square', async () => {
    const result = await summarize([3, 4, -1, 10]);
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ count: 4, sum: 16, mean: 4, min: -1, max: 10, rms: Math.sqrt((9 + 16 + 1 + 100) / 4) });
  });

  it('an empty list is a tool error from the Fail state, NoNumbers, with its Cause written in JSONata', async () => {
    const result = await summarize([]);
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/NoNumbers/);
    expect(result.content[0].text).toMatch(/needs at least one number, got 0/);
  });
});
