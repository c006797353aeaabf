/**
 * A 2026-07-28 synchronous round whose requestState expired, unanswered, stops its execution
 * and frees its slot: its record lives no longer than the state (plus one round), then slot
 * repair at the limit, or the late retry itself, ends it.
 */
import { describe, expect, it } from 'vitest';
import type { ServerContext } from '@modelcontextprotocol/server';
import type { McpDeps } from '../../lambdas/mcp/dialects/dialect.ts';
import { continueRetry, inputRequiredResult, type RoundCall } from '../../lambdas/mcp/input/input-responses.ts';
import { REQUEST_STATE_TTL_SECONDS } from '../../lambdas/mcp/input/request-state.ts';
import type { RequestView } from '../../lambdas/mcp/edge/request-view.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createOperations } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { ManualClock, memoryLogger, TEST_LIMITS, TEST_SECRET_KEY, expectOperationError } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const confirm = { method: 'elicitation/create', params: { message: 'Go on?', requestedSchema: { type: 'object', properties: {} } } };
const tool = testTool({ name: 'approve', invocation: 'both', timing: { ...testTool({ name: 'x' }).timing, maxRunSeconds: 7 * 86_400 } });
const owner = 'o';

/** A synchronous call's run that stopped at a question and handed the client its state. */
async function roundAtQuestion(clockMs: number) {
  const store = new InMemoryRecordStore();
  const engine = new FakeWorkflowEngine();
  const clock = new ManualClock(clockMs);
  const logger = memoryLogger();
  const service = createOperations({ store, engine, limits: { ...TEST_LIMITS, maxActiveOperations: 1 }, clock, logger, input: mcpInputProtocol });
  const deps = { operations: service, logger, secretKey: TEST_SECRET_KEY } as unknown as McpDeps;
  const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 'sync-1', dialect: 'sync', clientCapabilities: { elicitation: {} } });
  await service.inputs.ask({ operation: record, executionName: record.executionName, key: 'confirm', request: confirm, taskToken: 'tok-1' });
  const call: RoundCall = { tool, arguments: {}, view: { ownerId: owner } as RequestView, dialect: 'sync' };
  const result = await inputRequiredResult((await store.get(record))!, call, deps);
  return { store, engine, clock, service, deps, record, call, requestState: result.requestState as string };
}

describe('a synchronous round left unanswered', () => {
  it('its record lives no longer than its requestState, plus one round', async () => {
    const { store, record, clock } = await roundAtQuestion(Date.now());
    const expiresAt = (await store.get(record))!.expiresAt!;
    expect(expiresAt).toBeGreaterThanOrEqual(Math.floor(clock.ms / 1000) + REQUEST_STATE_TTL_SECONDS);
    expect(expiresAt).toBeLessThanOrEqual(Math.floor(clock.ms / 1000) + REQUEST_STATE_TTL_SECONDS + TEST_LIMITS.maxBlockingSeconds + 15);
  });

  it('once its state expired, the next start at the limit stops its execution and takes its slot', async () => {
    const { service, engine, clock, record, store } = await roundAtQuestion(Date.now());
    await expectOperationError(service.start({ ownerId: owner, tool, arguments: {}, token: 'next', dialect: 'sep-1391' }), 'LIMIT_EXCEEDED');
    clock.advance(REQUEST_STATE_TTL_SECONDS + TEST_LIMITS.maxBlockingSeconds + 16);
    expect((await service.start({ ownerId: owner, tool, arguments: {}, token: 'next', dialect: 'sep-1391' })).status).toBe('working');
    expect(engine.executions.get(record.executionArn!)?.status).toBe('ABORTED');
    expect((await store.get(record))?.status).toBe('canceled');
  });

  it('its late retry is refused as expired, and stops the execution and frees the slot', async () => {
    // The round ended twenty minutes ago: its state expired five minutes ago.
    const { engine, record, store, deps, call, requestState } = await roundAtQuestion(Date.now() - 20 * 60_000);
    const ctx = { mcpReq: { requestState: () => requestState, inputResponses: { confirm: { action: 'accept', content: {} } } } } as unknown as ServerContext;
    await expect(continueRetry(ctx, call, deps)).rejects.toThrow(/expired/);
    expect(engine.executions.get(record.executionArn!)?.status).toBe('ABORTED');
    expect((await store.get(record))?.status).toBe('canceled');
    expect(await store.listActiveSlots(owner)).toEqual([]);
    // The answer it carried never reached the state.
    expect(engine.taskCalls).toEqual([]);
  });

  it('a retry within its state goes on with the same operation', async () => {
    const { record, deps, call, requestState, clock } = await roundAtQuestion(Date.now());
    clock.advance(60);
    const ctx = { mcpReq: { requestState: () => requestState, inputResponses: {} } } as unknown as ServerContext;
    expect(await continueRetry(ctx, call, deps)).toEqual({ ownerId: owner, token: record.token });
  });
});
