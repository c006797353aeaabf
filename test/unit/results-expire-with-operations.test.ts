/**
 * Results expire with their operations: a synchronous call's record, which no client can
 * ever ask for, spills nothing (the call answers the result itself) and outlives the call
 * by a minute at most; a terminal state learned late (a replayed status event, a
 * reconcile) is kept keepAlive from when it was learned, never already expired; results
 * the server spills and results workers write sit under the prefixes the bucket's two
 * lifecycle rules follow.
 */
import { describe, expect, it, vi } from 'vitest';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { InMemoryResultStore } from '../support/in-memory-result-store.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { DEFAULT_SPILL_THRESHOLD_BYTES, RESULT_KEY_PREFIXES } from '../../lambdas/operations/result-store.ts';
import { SYNC_RECORD_KEEP_SECONDS } from '../../lambdas/operations/sync-runs.ts';
import { withResultStore, writeResult } from '../../lambdas/results/write-result.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { ManualClock, memoryLogger, TEST_LIMITS } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const owner = 'owner-a';
const DAY = 86_400;

function harness() {
  const results = new InMemoryResultStore();
  const records = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const clock = new ManualClock();
  const service = createOperations({
    store: records,
    engine,
    limits: { ...TEST_LIMITS, maxBlockingSeconds: 10 },
    clock,
    logger: memoryLogger(),
    results: { store: results },
    input: mcpInputProtocol,
  });
  return { results, records, engine, clock, service };
}

/** `{"data":"xx…"}`, `bytes` UTF-8 bytes of JSON. */
const outputOfBytes = (bytes: number) => ({ data: 'x'.repeat(bytes - '{"data":""}'.length) });

describe('a synchronous call (its record no client can read)', () => {
  it('answers an output over the spill threshold inline and stores no object', async () => {
    const h = harness();
    const tool = testTool({ name: 'hybrid', invocation: 'both', timing: { ...testTool({ name: 'x' }).timing, syncTimeoutSeconds: 5 } });
    const output = outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1000);
    const call = h.service.runSync({ ownerId: owner, tool, arguments: {} });
    await waitUntil(() => h.engine.executions.size === 1);
    const [execution] = h.engine.executions.values();
    const snapshot = h.engine.finish(execution!.executionArn, { status: 'SUCCEEDED', output, stopDate: new Date(h.clock.ms) });
    await h.service.applyExecution({ ownerId: owner, token: await tokenOfExecution(h, execution!.executionArn) }, snapshot);
    const outcome = await call;
    expect(outcome.kind === 'result' || outcome.kind === 'call-tool-result').toBe(true);
    expect(JSON.stringify(outcome)).toContain(output.data);
    expect(h.results.objects.size).toBe(0);
  });

  it(`keeps its record at most ${SYNC_RECORD_KEEP_SECONDS} s past the execution's end, whatever the tool's keepAlive`, async () => {
    const h = harness();
    const tool = testTool({ name: 'hybrid', invocation: 'both', timing: { ...testTool({ name: 'x' }).timing, keepAliveSeconds: 600 } });
    const call = h.service.runSync({ ownerId: owner, tool, arguments: {} });
    await waitUntil(() => h.engine.executions.size === 1);
    const [execution] = h.engine.executions.values();
    const token = await tokenOfExecution(h, execution!.executionArn);
    const record = (await h.service.applyExecution(
      { ownerId: owner, token },
      h.engine.finish(execution!.executionArn, { status: 'SUCCEEDED', output: { ok: 1 }, stopDate: new Date(h.clock.ms) }),
    ))!;
    await call;
    expect(record.keepAliveSeconds).toBe(SYNC_RECORD_KEEP_SECONDS);
    expect(record.expiresAt).toBeLessThanOrEqual(Math.ceil(h.clock.ms / 1000) + SYNC_RECORD_KEEP_SECONDS);
  });

  it('an operation the client can poll still spills, under the prefix kept for keepAlive only', async () => {
    const h = harness();
    const tool = testTool({ name: 'big' });
    const started = await h.service.start({ ownerId: owner, tool, arguments: {}, token: 'polled', dialect: 'sep-1391' });
    const snapshot = h.engine.finish(started.executionArn!, {
      status: 'SUCCEEDED',
      output: outputOfBytes(DEFAULT_SPILL_THRESHOLD_BYTES + 1),
      stopDate: new Date(h.clock.ms),
    });
    await h.service.applyExecution(started, snapshot);
    expect([...h.results.objects.keys()]).toEqual([expect.stringMatching(new RegExp(`^${RESULT_KEY_PREFIXES.server}`))]);
  });

  it('a result a worker writes during the run goes under the prefix kept for the run plus keepAlive', async () => {
    const h = harness();
    await h.service.start({ ownerId: owner, tool: testTool({ name: 'export' }), arguments: {}, token: 'export-op', dialect: 'sep-1391' });
    await withResultStore(h.results, () => writeResult({ ownerId: owner, token: 'export-op' }, 'a,b\n', { mimeType: 'text/csv', name: 'x.csv' }));
    expect([...h.results.objects.keys()]).toEqual([expect.stringMatching(new RegExp(`^${RESULT_KEY_PREFIXES.worker}`))]);
  });
});

describe('a terminal state learned late', () => {
  it('a status event replayed from the dead-letter queue ten days after the run ended is kept keepAlive from now, and reads', async () => {
    const h = harness();
    const tool = testTool({ name: 'long', timing: { ...testTool({ name: 'x' }).timing, maxRunSeconds: 30 * DAY } });
    const started = await h.service.start({ ownerId: owner, tool, arguments: {}, token: 'late', dialect: 'sep-1391', keepAliveSeconds: 600 });
    const stopDate = new Date(h.clock.ms + DAY * 1000);
    const snapshot = h.engine.finish(started.executionArn!, { status: 'SUCCEEDED', output: { done: true }, stopDate });
    h.clock.advance(11 * DAY);
    const record = (await h.service.applyExecution(started, snapshot))!;
    expect(record.status).toBe('completed');
    expect(record.completedAt).toBe(stopDate.getTime());
    expect(record.expiresAt).toBe(Math.ceil(h.clock.ms / 1000) + 600);
    await expect(h.service.readCurrent(started)).resolves.toMatchObject({ status: 'completed' });
    h.clock.advance(601);
    await expect(h.service.readCurrent(started)).rejects.toMatchObject({ code: 'EXPIRED' });
  });

  it('an event on time keeps the result keepAlive after the run ended, as before', async () => {
    const h = harness();
    const started = await h.service.start({
      ownerId: owner,
      tool: testTool({ name: 'on-time' }),
      arguments: {},
      token: 'on-time',
      dialect: 'sep-1391',
      keepAliveSeconds: 600,
    });
    const stopDate = new Date(h.clock.ms);
    const record = (await h.service.applyExecution(started, h.engine.finish(started.executionArn!, { status: 'SUCCEEDED', output: {}, stopDate })))!;
    expect(record.expiresAt).toBe(Math.ceil(stopDate.getTime() / 1000) + 600);
  });
});

/** The token of the record whose execution is `executionArn` (synchronous calls mint theirs). */
async function tokenOfExecution(h: ReturnType<typeof harness>, executionArn: string): Promise<string> {
  const input = h.engine.executions.get(executionArn)!.input as { operation: { token: string } };
  return input.operation.token;
}

const waitUntil = (condition: () => boolean) => vi.waitFor(() => expect(condition()).toBe(true), { timeout: 2000, interval: 10 });
