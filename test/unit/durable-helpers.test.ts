/**
 * The async-mcp/durable helpers on the testing SDK's LocalDurableTestRunner, imported by the
 * name a tool imports them by: reports are best-effort and checkpointed, large results are
 * linked once however often the handler replays, and the event says who called.
 */
import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { LocalDurableTestRunner, WaitingOperationStatus } from '@aws/durable-execution-sdk-js-testing';
import { callerOf, executionNameOf, linkResult, reportLog, reportProgress, type ToolEvent } from 'async-mcp/durable';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resultKeyFor, resultUriFor } from '../../lambdas/operations/result-store.ts';
import { withResultStore } from '../../lambdas/results/write-result.ts';
import { memoryLogger } from '../support/core-harness.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import { durableTool, startDurableTool } from './durable-tool-harness.ts';

beforeAll(() => LocalDurableTestRunner.setupTestEnvironment({ skipTime: true }));
afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

// Any async tool will do: the helpers only need an operation to write to.
const tool = await durableTool('count_primes_durable');

const event = (token: string | null, clientCapabilities?: Record<string, unknown>): ToolEvent<{ n: number }> => ({
  arguments: { n: 1 },
  operation: { token, tool: 'count_primes_durable', ownerId: 'owner-1', ...(clientCapabilities ? { clientCapabilities } : {}) },
});

describe('callerOf and executionNameOf', () => {
  it('callerOf names the owner, the token and what the client can answer', () => {
    expect(callerOf(event('t1', { elicitation: {} }))).toEqual({ ownerId: 'owner-1', token: 't1', clientCapabilities: { elicitation: {} } });
    expect(callerOf(event(null))).toEqual({ ownerId: 'owner-1', token: null, clientCapabilities: {} });
  });

  it('the execution name is the part of the ARN after /durable-execution/', () => {
    const arn = 'arn:aws:lambda:us-east-1:123456789012:function:async-mcp-tool-x:live/durable-execution/a1b2c3-name/0f1e2d3c-id';
    expect(executionNameOf({ executionContext: { durableExecutionArn: arn } })).toBe('a1b2c3-name');
  });
});

describe('reportProgress and reportLog', () => {
  it('a report the store cannot take is logged without its content, and the run goes on', async () => {
    const logger = memoryLogger();
    const handler = withDurableExecution(async (input: ToolEvent<unknown>, context: DurableContext) => {
      await reportProgress(context, input, { progress: 1, total: 2, message: 'reading customer-ledger.csv' }, { logger });
      return 'finished';
    });
    const failWrites: { error?: Error } = { error: new Error('store unreachable') };
    const run = await startDurableTool(tool, handler, { below: 10 }, { failWrites });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getResult()).toBe('finished');
    expect(logger.lines).toEqual([
      {
        level: 'warn',
        message: 'progress report not written; the run goes on',
        fields: { executionName: expect.any(String), error: 'Error: store unreachable' },
      },
    ]);
    expect(JSON.stringify(logger.lines)).not.toContain('customer-ledger');
    failWrites.error = undefined;
    expect((await run.current()).reports).toBeUndefined();
  });

  it('a malformed report fails the run with Mcp.InvalidReport, as the worker fails its state', async () => {
    const handler = withDurableExecution(async (input: ToolEvent<unknown>, context: DurableContext) => {
      await reportProgress(context, input, { progress: -1 });
      return 'not reached';
    });
    const execution = await (await startDurableTool(tool, handler, { below: 10 })).run;
    expect(execution.getStatus()).toBe('FAILED');
    expect(execution.getError()).toMatchObject({ errorType: 'Mcp.InvalidReport' });
  });

  it('a log line is written to the operation as report_progress writes it', async () => {
    const handler = withDurableExecution(async (input: ToolEvent<unknown>, context: DurableContext) => {
      await reportLog(context, input, { level: 'info', logger: 'primes', data: { checked: 10 } });
      return 'logged';
    });
    const run = await startDurableTool(tool, handler, { below: 10 });
    expect((await run.run).getResult()).toBe('logged');
    expect((await run.current()).reports).toEqual([expect.objectContaining({ kind: 'log', level: 'info', logger: 'primes', data: { checked: 10 }, seq: 1 })]);
  });
});

describe('linkResult', () => {
  it('stores the body once as the caller’s result and returns the same resource_link on every replay', async () => {
    const results = new InMemoryResultStore();
    const csv = 'index,value\n'.concat('1,2\n'.repeat(100_000));
    const inner = withDurableExecution(async (input: ToolEvent<unknown>, context: DurableContext) => {
      const link = await linkResult(context, input, csv, { mimeType: 'text/csv', name: 'rows.csv', description: 'All the rows' });
      // A callback the test answers: the handler runs again from the top, replaying the link.
      await context.waitForCallback('go-on', async () => undefined);
      return link;
    });
    const run = await startDurableTool(tool, (invocation, context) => withResultStore(results, () => inner(invocation, context)), { below: 10 });
    const goOn = run.runner.getOperation('go-on');
    await goOn.waitForData(WaitingOperationStatus.SUBMITTED);
    await goOn.sendCallbackSuccess('');
    const execution = await run.run;
    expect(run.invocations()).toBeGreaterThan(1);
    const link = execution.getResult() as { content: Array<{ type: string; uri: string; name: string; mimeType: string; size: number; description: string }> };
    expect(link.content).toEqual([
      { type: 'resource_link', uri: expect.any(String), name: 'rows.csv', mimeType: 'text/csv', size: csv.length, description: 'All the rows' },
    ]);
    expect(results.objects.size).toBe(1);
    const resultId = link.content[0]?.uri.slice(resultUriFor('').length) ?? '';
    const stored = results.objects.get(resultKeyFor('o1', resultId));
    expect(Buffer.from(stored?.body ?? []).toString('utf8')).toBe(csv);
    expect(stored?.contentType).toBe('text/csv');
  });

  it('a synchronous call, which has no operation to keep the result with, is refused', async () => {
    const handler = withDurableExecution(async (input: ToolEvent<unknown>, context: DurableContext) =>
      linkResult(context, { ...input, operation: { ...input.operation, token: null } }, 'x', { mimeType: 'text/plain', name: 'x.txt' }),
    );
    const execution = await (await startDurableTool(tool, handler, { below: 10 })).run;
    expect(execution.getStatus()).toBe('FAILED');
    expect(execution.getError().errorMessage).toMatch(/synchronous call has none/);
  });
});
