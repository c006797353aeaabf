/** Issue "Loses no work", section 4 (the core's part): bounded ids and arguments, refused before any write. */
import { describe, expect, it } from 'vitest';
import { MAX_EXECUTION_INPUT_BYTES } from '../../lambdas/operations/operations-service.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { coreHarness, expectOperationError } from '../support/core-harness.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({ name: 'analyze' });
const owner = 'owner-a';

describe('bounded inputs', () => {
  it('arguments larger than StartExecution accepts (256 KB of input) are refused naming the limit, before anything is written', async () => {
    const { service, store, engine } = coreHarness();
    const error = await expectOperationError(
      service.start({ ownerId: owner, tool, arguments: { blob: 'x'.repeat(MAX_EXECUTION_INPUT_BYTES) }, token: 'big', dialect: 'sep-1391' }),
      'INVALID_INPUT',
    );
    expect(error.message).toMatch(/262144 bytes \(256 KB\)/);
    expect(await store.get({ ownerId: owner, token: 'big' })).toBeUndefined();
    expect(await store.listActiveSlots(owner)).toEqual([]);
    expect(engine.startCalls).toBe(0);
  });

  it('arguments just under the limit start', async () => {
    const { service } = coreHarness();
    const record = await service.start({
      ownerId: owner,
      tool,
      arguments: { blob: 'x'.repeat(MAX_EXECUTION_INPUT_BYTES - 200) },
      token: 'ok',
      dialect: 'sep-1391',
    });
    expect(record.status).toBe('working');
  });

  it('the same bound holds for synchronous EXPRESS runs', async () => {
    const { service } = coreHarness();
    const express = { ...tool, invocation: 'sync' as const, workflowType: 'EXPRESS' as const };
    await expectOperationError(service.runSync({ ownerId: owner, tool: express, arguments: { blob: 'x'.repeat(MAX_EXECUTION_INPUT_BYTES) } }), 'INVALID_INPUT');
  });

  it('a token longer than 1,000 bytes is refused before anything is written, and reading one is "not found"', async () => {
    const { service, store } = coreHarness();
    const token = 't'.repeat(3000);
    await expectOperationError(service.start({ ownerId: owner, tool, arguments: {}, token, dialect: 'sep-1391' }), 'INVALID_INPUT');
    expect(await store.listActiveSlots(owner)).toEqual([]);
    await expectOperationError(service.readCurrent({ ownerId: owner, token }), 'NOT_FOUND');
    await expectOperationError(service.cancel({ ownerId: owner, token }), 'NOT_FOUND');
  });

  it('a long JSON-RPC id on a call leaves no submitted record behind', async () => {
    const { service, store } = coreHarness();
    await expectOperationError(
      service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391', requestId: `s:${'9'.repeat(3000)}` }),
      'INVALID_INPUT',
    );
    expect(await store.get({ ownerId: owner, token: 't' })).toBeUndefined();
    expect(await service.findByRequestId(owner, `s:${'9'.repeat(3000)}`)).toBeUndefined();
  });
});

describe('nothing internal is stored', () => {
  it('a Lambda worker’s Cause keeps errorType and errorMessage, never its trace', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 't', dialect: 'sep-1391' });
    const cause = JSON.stringify({
      errorType: 'RangeError',
      errorMessage: 'rows must be positive',
      trace: ['RangeError: rows must be positive', '    at handler (/var/task/index.mjs:1:99)'],
    });
    const failed = await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'FAILED', error: 'RangeError', cause }));
    expect(failed?.outcome).toEqual({
      kind: 'tool-error',
      error: 'RangeError',
      cause: JSON.stringify({ errorType: 'RangeError', errorMessage: 'rows must be positive' }),
    });
  });
});

describe('outputs the server cannot keep', () => {
  it('a result nested thousands of levels deep fails the operation with a reason and frees its slot, instead of breaking every later write', async () => {
    const { service, engine, store } = coreHarness({ limits: { maxActiveOperations: 1 } });
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 'deep', dialect: 'sep-1391' });
    let output: unknown = 'leaf';
    for (let i = 0; i < 50_000; i++) output = [output];
    const failed = await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'SUCCEEDED', output }));
    expect(failed).toMatchObject({ status: 'failed', outcome: { kind: 'internal-error', message: expect.stringContaining('nests deeper than 256 levels') } });
    expect(await store.listActiveSlots(owner)).toEqual([]);
  });

  it('a protocol error whose data nests too deep is kept as an internal error', async () => {
    const { service, engine } = coreHarness();
    const record = await service.start({ ownerId: owner, tool, arguments: {}, token: 'deep-error', dialect: 'sep-1391' });
    const cause = `{"code":-32602,"message":"bad","data":${'['.repeat(300)}${']'.repeat(300)}}`;
    const failed = await service.applyExecution(record, engine.finish(record.executionArn!, { status: 'FAILED', error: 'Mcp.ProtocolError', cause }));
    expect(failed?.outcome).toMatchObject({ kind: 'internal-error' });
  });
});
