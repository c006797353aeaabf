/**
 * count_primes_durable on the testing SDK's LocalDurableTestRunner, its helpers writing into
 * the in-memory core: steps, a wait, progress after each chunk, and a result shaped and
 * checked against the tool's outputSchema as a state machine's output is.
 */
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shapeFinishedResult } from '../../lambdas/mcp/results/result-shaping.ts';
import { handler } from '../../state-machines/count_primes_durable/durable.ts';
import { durableTool, startDurableTool } from './durable-tool-harness.ts';

const tool = await durableTool('count_primes_durable');

beforeAll(() => LocalDurableTestRunner.setupTestEnvironment({ skipTime: true }));
afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

/** The primes below `below`, by trial division: slow, and plainly right. */
function naivePrimes(below: number): number[] {
  const primes: number[] = [];
  for (let n = 2; n < below; n++) if (primes.every((p) => p * p > n || n % p !== 0)) primes.push(n);
  return primes;
}

describe('count_primes_durable', () => {
  it('counts the primes below the bound in chunks, after a durable wait, and its result passes the outputSchema', async () => {
    const run = await startDurableTool(tool, handler, { below: 10_007, chunks: 3, pauseSeconds: 5 });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    const primes = naivePrimes(10_007);
    const shaped = shapeFinishedResult({ kind: 'result', output: execution.getResult() }, tool);
    expect(shaped.kind).toBe('call-tool-result');
    const result = (shaped as unknown as { result: { structuredContent: Record<string, unknown>; content: Array<{ text: string }>; isError?: boolean } })
      .result;
    expect(result.isError).toBeUndefined();
    expect(result.structuredContent).toMatchObject({ below: 10_007, primes: primes.length, largest: primes.at(-1) });
    const chunks = result.structuredContent.chunks as Array<{ from: number; to: number; primes: number }>;
    expect(chunks.map(({ from, to }) => [from, to])).toEqual([
      [0, 3336],
      [3336, 6672],
      [6672, 10_007],
    ]);
    expect(chunks.map((chunk) => chunk.primes)).toEqual(chunks.map(({ from, to }) => primes.filter((p) => p >= from && p < to).length));
    expect(result.content[0]?.text).toBe(`There are ${primes.length} primes below 10007; the largest is ${primes.at(-1)}.`);
    expect(run.runner.getOperation('pause').getWaitDetails()?.waitSeconds).toBe(5);
  });

  it('reports progress after planning and after each chunk, and the latest report is the status message', async () => {
    const run = await startDurableTool(tool, handler, { below: 1000, chunks: 4, pauseSeconds: 2 });
    expect((await run.run).getStatus()).toBe('SUCCEEDED');
    const record = await run.current();
    expect(record.reports?.map((report) => (report.kind === 'progress' ? [report.progress, report.total] : report.kind))).toEqual([
      [0, 4],
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
    expect(record.statusMessage).toBe('Counted 4 of 4 chunks');
  });

  it('with no pause and a bound of 2 there is nothing to count: no largest prime, and no wait', async () => {
    const run = await startDurableTool(tool, handler, { below: 2, pauseSeconds: 0 });
    const execution = await run.run;
    const structured = (execution.getResult() as { structuredContent: Record<string, unknown> }).structuredContent;
    expect(structured).toEqual({
      below: 2,
      primes: 0,
      chunks: [
        { from: 0, to: 1, primes: 0 },
        { from: 1, to: 2, primes: 0 },
      ],
    });
    expect(execution.getOperations().map((operation) => operation.getType())).not.toContain('WAIT');
    expect(shapeFinishedResult({ kind: 'result', output: execution.getResult() }, tool).kind).toBe('call-tool-result');
  });
});
