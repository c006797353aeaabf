import { beforeEach, describe, expect, it, vi } from 'vitest';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createOperations, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, expectOperationError, type ManualClock, TEST_LIMITS as limits } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });

describe('OperationsService', () => {
  let store: InMemoryRecordStore;
  let engine: FakeWorkflowEngine;
  let clock: ManualClock;
  let service: OperationsService;
  const owner = 'owner-a';

  beforeEach(() => {
    ({ store, engine, clock, service } = coreHarness());
  });

  const start = (token = 't1', args: Record<string, unknown> = { rows: 10 }, extra: object = {}) =>
    service.start({ ownerId: owner, tool, arguments: args, token, dialect: 'sep-1391', ...extra });

  it('starts an execution and returns a durable working record with its ARN', async () => {
    const record = await start();
    expect(record.status).toBe('working');
    expect(record.executionArn).toMatch(/:execution:analyze:op-/);
    expect(await store.get({ ownerId: owner, token: 't1' })).toMatchObject({ status: 'working', executionArn: record.executionArn });
    const execution = engine.executions.get(record.executionArn!)!;
    expect(execution.input).toEqual({ arguments: { rows: 10 }, operation: { token: 't1', tool: 'analyze', ownerId: owner } });
  });

  it('returns the same operation for the same token and arguments, starting one execution', async () => {
    const first = await start('t1', { rows: 10, seed: 1 });
    const second = await start('t1', { seed: 1, rows: 10 });
    expect(second.executionArn).toBe(first.executionArn);
    expect(second.createdAt).toBe(first.createdAt);
    expect(engine.executions.size).toBe(1);
  });

  it('rejects the same token with other arguments as already used', async () => {
    await start('t1', { rows: 10 });
    const error = await expectOperationError(start('t1', { rows: 11 }), 'TOKEN_REUSED');
    expect(error.message).toMatch(/already used/);
  });

  it('resumes a start that crashed between the record and the execution, with the same execution name', async () => {
    engine.failStartWith = new Error('network down');
    engine.failDescribeWith = engine.failStopWith = new Error('network down');
    await expectOperationError(start(), 'INTERNAL');
    const stalled = await store.get({ ownerId: owner, token: 't1' });
    expect(stalled?.status).toBe('working');
    engine.failStartWith = undefined;
    engine.failDescribeWith = engine.failStopWith = undefined;
    const resumed = await start();
    expect(resumed.status).toBe('working');
    expect(resumed.executionArn).toContain(stalled!.executionName);
  });

  it('keeps tokens of different owners apart', async () => {
    await start('shared');
    await expectOperationError(service.readCurrent({ ownerId: 'owner-b', token: 'shared' }), 'NOT_FOUND');
    const other = await service.start({ ownerId: 'owner-b', tool, arguments: { rows: 99 }, token: 'shared', dialect: 'sep-1391' });
    expect(other.executionName).not.toBe((await store.get({ ownerId: owner, token: 'shared' }))!.executionName);
  });

  it('clamps keepAlive by the tool maximum and grants unlimited only when allowed', () => {
    expect(service.grantKeepAlive(tool, undefined)).toBe(60);
    expect(service.grantKeepAlive(tool, 10_000)).toBe(600);
    expect(service.grantKeepAlive(tool, 0)).toBe(1);
    expect(service.grantKeepAlive(tool, null)).toBe(600);
    const open = createOperations({ store, engine, limits: { ...limits, allowUnlimitedKeepAlive: true }, clock, input: mcpInputProtocol });
    expect(open.grantKeepAlive({ ...tool, timing: { ...tool.timing, maxKeepAliveSeconds: null } }, null)).toBeNull();
    expect(open.grantKeepAlive(tool, null)).toBe(600);
  });

  it('applies a SUCCEEDED execution as completed with its output and an expiry of completion + keepAlive', async () => {
    const record = await start();
    const snapshot = engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { mean: 2 }, stopDate: new Date(clock.ms) });
    const done = await service.applyExecution(record, snapshot);
    expect(done).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { mean: 2 } } });
    expect(done!.expiresAt).toBe(Math.ceil(clock.ms / 1000) + 60);
  });

  it('maps FAILED to a tool error and Mcp.ProtocolError to a protocol error', async () => {
    const a = await start('a');
    const failed = await service.applyExecution(a, engine.finish(a.executionArn!, { status: 'FAILED', error: 'Boom', cause: 'it broke' }));
    expect(failed).toMatchObject({ status: 'failed', outcome: { kind: 'tool-error', error: 'Boom', cause: 'it broke' } });
    const b = await start('b');
    const cause = JSON.stringify({ code: -32602, message: 'failures must not exceed tests' });
    const protocol = await service.applyExecution(b, engine.finish(b.executionArn!, { status: 'FAILED', error: 'Mcp.ProtocolError', cause }));
    expect(protocol).toMatchObject({ status: 'failed', outcome: { kind: 'protocol-error', code: -32602, message: 'failures must not exceed tests' } });
  });

  it('never overwrites a terminal state, so redelivered or late events change nothing', async () => {
    const record = await start();
    await service.cancel(record);
    const late = engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: {} });
    const after = await service.applyExecution(record, late);
    expect(after?.status).toBe('canceled');
    expect(await service.applyExecution(record, late)).toMatchObject({ status: 'canceled' });
  });

  it('cancel stops the execution once; cancelling a terminal operation changes nothing', async () => {
    const record = await start();
    const canceled = await service.cancel(record);
    expect(canceled.status).toBe('canceled');
    expect(engine.executions.get(record.executionArn!)!.status).toBe('ABORTED');
    const again = await service.cancel(record);
    expect(again).toEqual(canceled);
    expect(engine.stopCalls).toBe(1);
  });

  it('serves status from the record without the engine while it is fresh, and reconciles when stale', async () => {
    const record = await start();
    engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { ok: true } });
    expect((await service.readCurrent(record)).status).toBe('working');
    clock.advance(29);
    expect((await service.readCurrent(record)).status).toBe('working');
    clock.advance(1);
    expect(await service.readCurrent(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { ok: true } } });
  });

  it('marks an operation failed, with a reason, when its execution no longer exists', async () => {
    const record = await start();
    engine.executions.clear();
    // Past the window a start that has not reached Step Functions yet is given.
    clock.advance(61);
    expect(await service.readCurrent(record)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'internal-error', message: 'The execution for this operation never started or no longer exists' },
    });
  });

  it('reports expired operations as expired even while the item still exists', async () => {
    const record = await start();
    await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: {}, stopDate: new Date(clock.ms) }));
    clock.advance(59);
    expect((await service.readCurrent(record)).status).toBe('completed');
    clock.advance(2);
    await expectOperationError(service.readCurrent(record), 'EXPIRED');
    expect(await store.get(record)).toBeDefined();
  });

  it('finds the operation a request id started, for that owner only', async () => {
    await start('t1', { rows: 1 }, { requestId: '42' });
    expect(await service.findByRequestId(owner, '42')).toEqual({ ownerId: owner, token: 't1' });
    expect(await service.findByRequestId('owner-b', '42')).toBeUndefined();
  });

  it('lists only live operations of the owner, newest first', async () => {
    await start('old');
    clock.advance(1);
    await start('new');
    await service.start({ ownerId: 'owner-b', tool, arguments: {}, token: 'theirs', dialect: 'sep-1391' });
    const page = await service.list(owner, { limit: 10 });
    expect(page.items.map((r) => r.token)).toEqual(['new', 'old']);
  });

  it('runs an EXPRESS tool synchronously through StartSyncExecution without a record', async () => {
    const express: ToolSpec = { ...tool, name: 'calc', invocation: 'sync', workflowType: 'EXPRESS' };
    const outcome = await service.runSync({ ownerId: owner, tool: express, arguments: { a: 1 } });
    expect(outcome).toMatchObject({ kind: 'result', output: { echo: { arguments: { a: 1 } } } });
    expect(engine.startCalls).toBe(0);
    expect((await store.listByOwner(owner, { limit: 10 })).items).toEqual([]);
    expect(await store.listActiveSlots(owner)).toEqual([]);
  });

  it('gives up on an EXPRESS run that exceeds its bound with a tool error, not a Lambda timeout', async () => {
    const express: ToolSpec = { ...tool, name: 'calc', invocation: 'sync', workflowType: 'EXPRESS' };
    engine.syncDelayMs = 5_000;
    const real = createOperations({ store, engine, limits: { ...limits, maxBlockingSeconds: 1 }, input: mcpInputProtocol });
    const outcome = await real.runSync({ ownerId: owner, tool: express, arguments: {} });
    expect(outcome).toMatchObject({ kind: 'tool-error', error: 'SyncTimeout', cause: expect.stringContaining('1 seconds') });
  });

  it('stops a synchronous STANDARD run that exceeds its bound and says so', async () => {
    const real = createOperations({ store, engine, limits, input: mcpInputProtocol });
    const outcome = await real.runSync({ ownerId: owner, tool: { ...tool, invocation: 'both' }, arguments: {} });
    expect(outcome).toMatchObject({ kind: 'tool-error', error: 'SyncTimeout' });
    expect([...engine.executions.values()][0]!.status).toBe('ABORTED');
  });
});

describe('OperationsService with results too large to store', () => {
  it('records an internal error instead of losing the operation', async () => {
    const store = new InMemoryRecordStore({ maxRecordBytes: 4000 });
    const engine = new FakeWorkflowEngine();
    const service = createOperations({ store, engine, limits, input: mcpInputProtocol });
    const record = await service.start({ ownerId: 'o', tool, arguments: {}, token: 'big', dialect: 'sep-1391' });
    const snapshot = engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { blob: 'x'.repeat(10_000) } });
    expect(await service.applyExecution(record, snapshot)).toMatchObject({
      status: 'failed',
      outcome: { kind: 'internal-error', message: expect.stringContaining('larger than the server can store') },
    });
  });
});

describe('OperationsService.runSyncOrHandOff', () => {
  const owner = 'owner-a';
  const hybrid: ToolSpec = testTool({ name: 'suite', invocation: 'both' });

  it('hands a STANDARD run still going at its sync bound off as a running operation of the given dialect, not stopped', async () => {
    const { store, engine } = coreHarness();
    const service = createOperations({ store, engine, limits, input: mcpInputProtocol });
    const run = await service.runSyncOrHandOff({ ownerId: owner, tool: hybrid, arguments: { n: 1 }, dialect: 'handle' });
    expect(run).toMatchObject({ kind: 'handed-off', record: { status: 'working', dialect: 'handle', tool: 'suite' } });
    const record = (run as { record: { token: string; executionArn: string } }).record;
    // Server-minted: 128 random bits as base64url.
    expect(record.token).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(engine.stopCalls).toBe(0);
    expect(engine.executions.get(record.executionArn)!.status).toBe('RUNNING');
    expect(await service.readCurrent({ ownerId: owner, token: record.token })).toMatchObject({ status: 'working', dialect: 'handle' });
  });

  it('returns the outcome of a STANDARD run that finishes within its sync bound', async () => {
    const { store, engine } = coreHarness();
    const service = createOperations({ store, engine, limits: { ...limits, maxBlockingSeconds: 5 }, input: mcpInputProtocol });
    const run = service.runSyncOrHandOff({
      ownerId: owner,
      tool: { ...hybrid, timing: { ...hybrid.timing, syncTimeoutSeconds: 5 } },
      arguments: {},
      dialect: 'handle',
    });
    const [arn] = await vi.waitFor(() => {
      expect(engine.executions.size).toBe(1);
      return [...engine.executions.keys()];
    });
    const records = (await store.listByOwner(owner, { limit: 10 })).items;
    await service.applyExecution(records[0]!, engine.finish(arn!, { status: 'SUCCEEDED', output: { passed: 3 } }));
    expect(await run).toEqual({ kind: 'finished', outcome: { kind: 'result', output: { passed: 3 } } });
  });

  it('runs an EXPRESS tool exactly like runSync: no record, nothing to hand off', async () => {
    const { store, engine, service } = coreHarness();
    const express: ToolSpec = { ...hybrid, workflowType: 'EXPRESS' };
    const run = await service.runSyncOrHandOff({ ownerId: owner, tool: express, arguments: { a: 1 }, dialect: 'handle' });
    expect(run).toMatchObject({ kind: 'finished', outcome: { kind: 'result', output: { echo: { arguments: { a: 1 } } } } });
    expect(engine.startCalls).toBe(0);
    expect((await store.listByOwner(owner, { limit: 10 })).items).toEqual([]);
  });

  it("counts against the principal's active-operation limit like any start", async () => {
    const { store, engine } = coreHarness();
    const service = createOperations({ store, engine, limits: { ...limits, maxActiveOperations: 1 }, input: mcpInputProtocol });
    await service.start({ ownerId: owner, tool, arguments: {}, token: 'busy', dialect: 'sep-1391' });
    await expectOperationError(service.runSyncOrHandOff({ ownerId: owner, tool: hybrid, arguments: {}, dialect: 'handle' }), 'LIMIT_EXCEEDED');
    expect(engine.executions.size).toBe(1);
  });
});
