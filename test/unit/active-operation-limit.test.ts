/** Issue "Loses no work", section 5: a per-principal limit on active operations. */
import { describe, expect, it, vi } from 'vitest';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, expectOperationError } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });
const start = (service: ReturnType<typeof coreHarness>['service'], token: string, ownerId = 'owner-a') =>
  service.start({ ownerId, tool, arguments: {}, token, dialect: 'sep-1391' });

describe('per-principal limit on active operations', () => {
  it('the next start past the limit is refused, naming the limit, and nothing is written', async () => {
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 2 } });
    await start(service, 'a');
    await start(service, 'b');
    const error = await expectOperationError(start(service, 'c'), 'LIMIT_EXCEEDED');
    expect(error.message).toMatch(/at most 2 may run at once/);
    expect(error.data).toEqual({ limit: 2, retryAfterSeconds: 5 });
    expect(await store.get({ ownerId: 'owner-a', token: 'c' })).toBeUndefined();
    expect(engine.executionCount).toBe(2);
  });

  it("a start whose slot would overflow the principal's slot item is refused as over the limit, and nothing is written", async () => {
    // Items are small here, so a few long tokens fill the slot item before the limit of 100.
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 100 }, store: { maxRecordBytes: 2_000 } });
    const token = (n: number) => `${n}`.padEnd(400, 't');
    for (let n = 0; n < 4; n++) await start(service, token(n));
    await expectOperationError(start(service, token(4)), 'LIMIT_EXCEEDED');
    expect(await store.get({ ownerId: 'owner-a', token: token(4) })).toBeUndefined();
    expect(engine.executionCount).toBe(4);
  });

  it('other principals are unaffected', async () => {
    const { service } = coreHarness({ limits: { maxActiveOperations: 1 } });
    await start(service, 'a');
    await expectOperationError(start(service, 'b'), 'LIMIT_EXCEEDED');
    expect((await start(service, 'b', 'owner-b')).status).toBe('working');
  });

  it('ending an operation frees a slot: completion and cancellation', async () => {
    const { service, engine } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const a = await start(service, 'a');
    await service.applyExecution(a, engine.finish(a.executionArn!, { status: 'SUCCEEDED', output: {} }));
    const b = await start(service, 'b');
    await service.cancel(b);
    expect((await start(service, 'c')).status).toBe('working');
  });

  it('a retry of a call already accepted is answered at the limit, not refused', async () => {
    const { service } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const first = await start(service, 'a');
    expect(await start(service, 'a')).toMatchObject({ token: 'a', executionArn: first.executionArn });
  });

  it('a retry of a finished call does not take a slot', async () => {
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const a = await start(service, 'a');
    await service.applyExecution(a, engine.finish(a.executionArn!, { status: 'SUCCEEDED', output: {} }));
    expect((await start(service, 'a')).status).toBe('completed');
    expect(await store.listActiveSlots('owner-a')).toEqual([]);
  });

  it('holds under concurrent starts: 10 at once with a limit of 3 start exactly 3', async () => {
    const { service, engine } = coreHarness({ limits: { maxActiveOperations: 3 } });
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => start(service, `t${i}`)));
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(3);
    expect(engine.executionCount).toBe(3);
  });

  it('a slot a crash never gave back is repaired when the limit is reached', async () => {
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const a = await start(service, 'a');
    // The terminal write succeeds, the release is lost (the process died in between).
    const release = vi.spyOn(store, 'releaseActiveSlot').mockRejectedValueOnce(new Error('crash'));
    await service.applyExecution(a, engine.finish(a.executionArn!, { status: 'SUCCEEDED', output: {} }));
    release.mockRestore();
    expect(await store.listActiveSlots('owner-a')).toEqual(['a']);
    expect((await start(service, 'b')).status).toBe('working');
    expect(await store.listActiveSlots('owner-a')).toEqual(['b']);
  });

  it('a slot whose record is gone (expired and deleted by TTL) is repaired too', async () => {
    const { service, store } = coreHarness({ limits: { maxActiveOperations: 1 } });
    await start(service, 'a');
    await store.discard({ ownerId: 'owner-a', token: 'a' }, ['working']);
    expect((await start(service, 'b')).status).toBe('working');
    expect(await store.listActiveSlots('owner-a')).toEqual(['b']);
  });

  it('holds when the store is slow: a repair never frees the slot of a start still on its way', async () => {
    const { service, store, engine } = coreHarness({ limits: { maxActiveOperations: 3 } });
    // Every store call takes 2-10 ms, so starts interleave at every await.
    for (const method of ['create', 'get', 'claimActiveSlot', 'listActiveSlots', 'transition', 'discard'] as const) {
      const original = store[method].bind(store) as (...args: unknown[]) => Promise<unknown>;
      (store as unknown as Record<string, unknown>)[method] = async (...args: unknown[]) => {
        await new Promise((resolve) => setTimeout(resolve, 2 + Math.random() * 8));
        return original(...args);
      };
    }
    for (let round = 0; round < 3; round++) {
      await Promise.allSettled(Array.from({ length: 20 }, (_, i) => start(service, `r${round}-${i}`)));
      const running = [...engine.executions.values()].filter((execution) => execution.status === 'RUNNING');
      expect(running.length).toBeLessThanOrEqual(3);
      expect(await store.listActiveSlots('owner-a')).toHaveLength(running.length);
    }
  });

  it('a refused start takes back the record it wrote, so nothing is left behind', async () => {
    const { service, store } = coreHarness({ limits: { maxActiveOperations: 1 } });
    await start(service, 'a');
    await expectOperationError(start(service, 'b'), 'LIMIT_EXCEEDED');
    expect(await store.get({ ownerId: 'owner-a', token: 'b' })).toBeUndefined();
    expect((await store.listByOwner('owner-a', { limit: 10 })).items.map((r) => r.token)).toEqual(['a']);
  });
});
