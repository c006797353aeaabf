/**
 * A defineTool handler run on the testing SDK's LocalDurableTestRunner (issue 49): it gets its
 * arguments parsed by inputSchema and the helpers on its context; what it returns is parsed by
 * outputSchema, and what outputSchema refuses goes out as returned, for the server to refuse
 * naming the field, as it refuses a state machine's output.
 */
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../lambdas/durable/index.ts';
import { shapeFinishedResult } from '../../lambdas/mcp/results/result-shaping.ts';
import { toolJsonOf } from '../../lambdas/tools/defined-tool-config.ts';

beforeAll(() => LocalDurableTestRunner.setupTestEnvironment({ skipTime: true }));
afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

const OPERATION = { token: null, tool: 'scaled_sum', ownerId: 'owner-1', clientCapabilities: { elicitation: {} } };

const scaledSum = defineTool(
  {
    name: 'scaled_sum',
    description: 'Adds numbers, scaled.',
    inputSchema: z.object({ numbers: z.array(z.number()).min(1), scale: z.number().default(10) }),
    outputSchema: z.object({ sum: z.number(), label: z.string().transform((label) => label.toUpperCase()) }),
    invocation: 'sync',
  },
  async ({ numbers, scale }, context) => {
    const sum = await context.step('sum', async () => numbers.reduce((a, b) => a + b, 0) * scale);
    if (sum < 0) return { isError: true, content: [{ type: 'text', text: 'negative' }] };
    // Past the compiler: a sum of 13 answers a string, which outputSchema refuses.
    if (sum === 13) return { sum: 'thirteen' as unknown as number, label: 'odd' };
    return { sum, label: `${context.caller.ownerId} ${context.event.operation.tool}` };
  },
);

async function run(args: Record<string, unknown>) {
  const runner = new LocalDurableTestRunner<unknown>({ handlerFunction: scaledSum });
  const execution = await runner.run({ payload: { arguments: args, operation: OPERATION } });
  expect(execution.getStatus()).toBe('SUCCEEDED');
  return execution.getResult();
}

describe('a defineTool handler, run', () => {
  it('gets its arguments with inputSchema’s defaults, and the caller and the event on its context', async () => {
    expect(await run({ numbers: [1, 2] })).toEqual({ sum: 30, label: 'OWNER-1 SCALED_SUM' });
    expect(await run({ numbers: [1, 2], scale: 1 })).toEqual({ sum: 3, label: 'OWNER-1 SCALED_SUM' });
  });

  it('passes an error result through unchecked: it describes no success', async () => {
    expect(await run({ numbers: [-1], scale: 1 })).toEqual({ isError: true, content: [{ type: 'text', text: 'negative' }] });
  });

  it('returns a result outputSchema refuses as it is, and the server refuses it naming the field', async () => {
    const output = await run({ numbers: [13], scale: 1 });
    expect(output).toEqual({ sum: 'thirteen', label: 'odd' });
    const { outputSchema } = toolJsonOf(scaledSum.definition) as { outputSchema: Record<string, unknown> };
    const shaped = shapeFinishedResult({ kind: 'result', output }, { name: 'scaled_sum', outputSchema: outputSchema as never });
    expect(shaped).toEqual({
      kind: 'internal-error',
      message: expect.stringMatching(/^Tool scaled_sum produced output that does not match its outputSchema: .*sum/),
    });
  });
});
