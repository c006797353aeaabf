/** Issue "Loses no work", section 3: every record expires, whatever a caller does. */
import { describe, expect, it } from 'vitest';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { coreHarness, expectOperationError, TEST_LIMITS } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

// keepAlive 60 s, longest run 3,600 s (see the fixture).
const tool: ToolSpec = testTool({ name: 'analyze' });
const owner = 'owner-a';

describe('every record expires', () => {
  it('a started record, and one whose start failed, expires at creation + the tool’s longest run + keepAlive', async () => {
    const { service, store, engine, clock } = coreHarness();
    engine.failStartWith = new Error('down');
    engine.failDescribeWith = engine.failStopWith = new Error('down');
    await expectOperationError(service.start({ ownerId: owner, tool, arguments: {}, token: 'sub', dialect: 'sep-1391' }), 'INTERNAL');
    engine.failDescribeWith = engine.failStopWith = undefined;
    const unstarted = await store.get({ ownerId: owner, token: 'sub' });
    expect(unstarted).toMatchObject({ status: 'working', expiresAt: Math.ceil(clock.ms / 1000) + 3600 + 60 });
    engine.failStartWith = undefined;
    const working = await service.start({ ownerId: owner, tool, arguments: {}, token: 'work', dialect: 'sep-1391' });
    expect(working).toMatchObject({ status: 'working', expiresAt: Math.ceil(clock.ms / 1000) + 3600 + 60 });
  });

  it('a failed start leaves a record that expires (never started: failed, then completion + keepAlive)', async () => {
    const { service, engine, clock } = coreHarness();
    engine.failStartWith = new Error('down');
    engine.failDescribeWith = engine.failStopWith = new Error('down');
    const key = { ownerId: owner, token: 'lost' };
    await expectOperationError(service.start({ ...key, tool, arguments: {}, dialect: 'sep-1391' }), 'INTERNAL');
    engine.failDescribeWith = engine.failStopWith = undefined;
    clock.advance(61);
    const failed = await service.readCurrent(key);
    expect(failed).toMatchObject({ status: 'failed', expiresAt: Math.ceil(clock.ms / 1000) + 60 });
    clock.advance(61);
    await expectOperationError(service.readCurrent(key), 'EXPIRED');
  });

  it('a synchronous STANDARD run’s record expires', async () => {
    const { store, engine } = coreHarness();
    // Real time: the run waits out its 1 s bound and is stopped.
    const service = createOperations({ store, engine, limits: TEST_LIMITS, input: mcpInputProtocol });
    await service.runSync({ ownerId: owner, tool: { ...tool, invocation: 'both' }, arguments: {} });
    const [record] = (await store.listByOwner(owner, { limit: 10 })).items;
    expect(record?.dialect).toBe('sync');
    expect(record?.expiresAt).toEqual(expect.any(Number));
  });

  it('a running record past its expiry reads as expired even though the item is still there (TTL deletes late)', async () => {
    const { service, store, clock } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 'old', dialect: 'sep-1391' });
    clock.ms = record.expiresAt! * 1000;
    await expectOperationError(service.readCurrent(record), 'EXPIRED');
    expect(await store.get(record)).toBeDefined();
  });

  it('only an operator-allowed unlimited keepAlive leaves a finished record without expiry', async () => {
    const { service, engine } = coreHarness({ limits: { allowUnlimitedKeepAlive: true } });
    const unlimited = { ...tool, timing: { ...tool.timing, maxKeepAliveSeconds: null } };
    const record = await service.start({ ownerId: owner, tool: unlimited, arguments: {}, token: 'keep', dialect: 'sep-1391', keepAliveSeconds: null });
    expect(record.expiresAt).toEqual(expect.any(Number));
    const done = await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: {} }));
    expect(done?.expiresAt).toBeUndefined();
  });
});
