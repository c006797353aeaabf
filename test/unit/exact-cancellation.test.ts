/**
 * Issue "Loses no work", section 1: cancellation hits exactly the intended operation,
 * and a cancel that races completion or the start loses nothing and orphans nothing.
 */
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });
const express: ToolSpec = testTool({ name: 'calc', invocation: 'sync', workflowType: 'EXPRESS' });
const owner = 'owner-a';

describe('cancel racing completion', () => {
  it('when StopExecution finds the execution already finished, the record takes its real outcome and the result is kept', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    // The execution succeeded, but its SUCCEEDED event has not reached the record yet.
    engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { mean: 4 } });
    const after = await service.cancel(record);
    expect(after).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { mean: 4 } } });
    // The late SUCCEEDED event changes nothing, and the result stays retrievable.
    expect(await service.applyExecution(record, await engine.describe(record.executionArn!))).toMatchObject({ status: 'completed' });
  });

  it('a cancel that finds the execution failed keeps the tool failure', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    engine.finish(record.executionArn!, { status: 'FAILED', error: 'Boom', cause: 'it broke' });
    expect(await service.cancel(record)).toMatchObject({ status: 'failed', outcome: { kind: 'tool-error', error: 'Boom' } });
  });

  it('a cancel that stops a running execution records canceled, with the stop as its reason', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    expect(await service.cancel(record, 'user asked')).toMatchObject({ status: 'canceled' });
    expect(engine.executions.get(record.executionArn!)).toMatchObject({ status: 'ABORTED', error: 'Mcp.Canceled', cause: 'user asked' });
  });
});

describe('cancel during start', () => {
  it('a cancel that arrives before StartExecution answers never leaves an orphan execution', async () => {
    const { service, engine, store } = coreHarness();
    engine.beforeStart = async () => {
      engine.beforeStart = undefined;
      // The record exists (working, with its derivable ARN); the execution does not yet.
      const created = await store.get({ ownerId: owner, token: 't' });
      expect(created).toMatchObject({ status: 'working', executionArn: expect.stringContaining(':execution:analyze:op-') });
      expect(await service.cancel({ ownerId: owner, token: 't' })).toMatchObject({ status: 'canceled' });
    };
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    expect(record.status).toBe('canceled');
    expect(engine.executionCount).toBe(1);
    expect(engine.executions.get(record.executionArn!)!.status).toBe('ABORTED');
  });

  it('a start that crashed after StartExecution, with a cancel before it, is stopped by the RUNNING event', async () => {
    const { service, engine } = coreHarness();
    engine.beforeStart = async () => {
      engine.beforeStart = undefined;
      await service.cancel({ ownerId: owner, token: 't' });
      // The starter dies right after AWS accepted the start: nobody in start() will stop it.
      engine.loseStartResponse = true;
      engine.failDescribeWith = new Error('connection reset');
    };
    const failedStart = service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    await expect(failedStart).rejects.toThrow('did not start');
    const [execution] = [...engine.executions.values()];
    // The start's error path saw the cancel and stopped it; the RUNNING event would too.
    expect(execution!.status).toBe('ABORTED');
  });

  it('the RUNNING event of an execution whose record was canceled before it started stops it', async () => {
    const { service, engine, store } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    // As if the cancel had found no execution and written canceled, and the start then went through.
    await store.transition(record, ['working'], { status: 'canceled', completedAt: 1, updatedAt: 1 });
    const running = await engine.describe(record.executionArn!);
    expect(running.status).toBe('RUNNING');
    await service.applyExecution(record, running);
    expect(engine.executions.get(record.executionArn!)!.status).toBe('ABORTED');
  });
});

describe('cancel by request id', () => {
  it('targets the latest tools/call with that id: a finished synchronous call that reused the id makes the cancel a no-op', async () => {
    const { service } = coreHarness();
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'older', dialect: 'sep-1391', requestId: 'n:7' });
    expect(await service.findByRequestId(owner, 'n:7')).toEqual({ ownerId: owner, token: 'older' });
    await service.runSync({ ownerId: owner, tool: express, arguments: {}, requestId: 'n:7' });
    expect(await service.findByRequestId(owner, 'n:7')).toBeUndefined();
  });

  it('a task created with a reused id supersedes the older operation too (tasks are cancelled with tasks/cancel)', async () => {
    const { service } = coreHarness();
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'older', dialect: 'sep-1391', requestId: 's:a' });
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'task', dialect: 'tasks-2026-07-28', requestId: 's:a' });
    expect(await service.findByRequestId(owner, 's:a')).toBeUndefined();
  });

  it('a newer cancelable call with the same id takes the id', async () => {
    const { service } = coreHarness();
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'first', dialect: 'sep-1391', requestId: 'n:1' });
    await service.start({ ownerId: owner, tool, arguments: { x: 1 }, token: 'second', dialect: 'sep-1391', requestId: 'n:1' });
    expect(await service.findByRequestId(owner, 'n:1')).toEqual({ ownerId: owner, token: 'second' });
  });

  it('ids of different JSON types stay apart (7 and "7")', async () => {
    const { service } = coreHarness();
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'number', dialect: 'sep-1391', requestId: 'n:7' });
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'string', dialect: 'sep-1391', requestId: 's:7' });
    expect(await service.findByRequestId(owner, 'n:7')).toEqual({ ownerId: owner, token: 'number' });
    expect(await service.findByRequestId(owner, 's:7')).toEqual({ ownerId: owner, token: 'string' });
  });

  it('aliases expire with their operation, not a year later', async () => {
    const { service, store, clock } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391', requestId: 'n:3' });
    const alias = await store.findRequestAlias(owner, 'n:3');
    expect(alias).toEqual({ token: 't', expiresAt: record.expiresAt });
    clock.ms = record.expiresAt! * 1000;
    expect(await service.findByRequestId(owner, 'n:3')).toBeUndefined();
  });

  it('no alias is written for calls that cannot be cancelled by id', async () => {
    const { service, store } = coreHarness();
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'task', dialect: 'tasks-2025-11-25', requestId: 'n:9' });
    await service.runSync({ ownerId: owner, tool: express, arguments: {}, requestId: 'n:10' });
    expect(await store.findRequestAlias(owner, 'n:9')).toBeUndefined();
    expect(await store.findRequestAlias(owner, 'n:10')).toBeUndefined();
  });
});
