import { beforeEach, describe, expect, it } from 'vitest';
import { createStatusSyncHandler, type ExecutionStatusChangeEvent } from '../../lambdas/aws/status-sync.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createOperations, DEFAULT_LIMITS, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const tool: ToolSpec = testTool({
  name: 'job',
  timing: { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 5, syncTimeoutSeconds: 5, maxRunSeconds: 3600 },
});

function eventFor(executionArn: string, input: unknown, detail: Partial<ExecutionStatusChangeEvent['detail']>): ExecutionStatusChangeEvent {
  return {
    id: 'evt-1',
    'detail-type': 'Step Functions Execution Status Change',
    source: 'aws.states',
    detail: {
      executionArn,
      status: 'RUNNING',
      startDate: Date.now(),
      stopDate: null,
      input: JSON.stringify(input),
      inputDetails: { included: true },
      output: null,
      outputDetails: null,
      error: null,
      cause: null,
      ...detail,
    },
  };
}

describe('status-sync handler', () => {
  let store: InMemoryRecordStore;
  let engine: FakeWorkflowEngine;
  let operations: OperationsService;
  const logged: unknown[] = [];
  let sync: ReturnType<typeof createStatusSyncHandler>;

  beforeEach(() => {
    store = new InMemoryRecordStore();
    engine = new FakeWorkflowEngine();
    operations = createOperations({ store, engine, limits: DEFAULT_LIMITS, input: mcpInputProtocol });
    logged.length = 0;
    sync = createStatusSyncHandler(operations, engine, { error: (_m, fields) => logged.push(fields), warn: () => undefined });
  });

  async function started(token = 't') {
    const record = await operations.start({ ownerId: 'o', tool, arguments: { n: 1 }, token, dialect: 'sep-1391' });
    return { record, input: engine.executions.get(record.executionArn!)!.input };
  }

  it('writes the terminal state, output and expiry from a SUCCEEDED event', async () => {
    const { record, input } = await started();
    await sync(eventFor(record.executionArn!, input, { status: 'SUCCEEDED', output: '{"sum":3}', stopDate: Date.now() }));
    expect(await store.get(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { sum: 3 } }, expiresAt: expect.any(Number) });
  });

  it('is idempotent on redelivery and never overwrites a terminal state with a late event', async () => {
    const { record, input } = await started();
    const failed = eventFor(record.executionArn!, input, { status: 'FAILED', error: 'Boom', cause: 'bad', stopDate: Date.now() });
    await sync(failed);
    await sync(failed);
    await sync(eventFor(record.executionArn!, input, { status: 'RUNNING' }));
    await sync(eventFor(record.executionArn!, input, { status: 'SUCCEEDED', output: '{}' }));
    expect(await store.get(record)).toMatchObject({ status: 'failed', outcome: { kind: 'tool-error', error: 'Boom', cause: 'bad' } });
  });

  it('maps ABORTED to canceled', async () => {
    const { record, input } = await started();
    await sync(eventFor(record.executionArn!, input, { status: 'ABORTED', error: 'Mcp.Canceled', stopDate: Date.now() }));
    expect((await store.get(record))?.status).toBe('canceled');
  });

  it('reads input and output from the execution when EventBridge left them out (over 256 KB)', async () => {
    const { record } = await started();
    engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { big: true } });
    await sync(
      eventFor(record.executionArn!, null, {
        status: 'SUCCEEDED',
        input: null,
        inputDetails: { included: false },
        output: null,
        outputDetails: { included: false },
      }),
    );
    expect(await store.get(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { big: true } } });
  });

  it('ignores executions that carry no operation, logging only ids', async () => {
    await sync(eventFor('arn:aws:states:us-east-1:0:execution:job:x', { arguments: { secret: 'hunter2' } }, { status: 'SUCCEEDED', output: '{}' }));
    expect(logged).toHaveLength(1);
    expect(JSON.stringify(logged)).not.toContain('hunter2');
  });

  it('ignores events for records that no longer exist', async () => {
    await expect(
      sync(eventFor('arn:aws:states:us-east-1:0:execution:job:gone', { operation: { token: 'gone', ownerId: 'o' } }, { status: 'SUCCEEDED', output: '{}' })),
    ).resolves.toBeUndefined();
  });

  it('an event of another execution than the record’s never writes into it (a token reused after expiry)', async () => {
    const { record, input } = await started();
    const otherArn = record.executionArn!.replace(record.executionName, 'op-an-older-execution');
    await sync(eventFor(otherArn, input, { status: 'SUCCEEDED', output: '{"stale":true}', stopDate: Date.now() }));
    expect(await store.get(record)).toMatchObject({ status: 'working' });
    expect((await store.get(record))?.outcome).toBeUndefined();
  });

  it('a RUNNING event moves a submitted record to working without a DescribeExecution', async () => {
    engine.loseStartResponse = true;
    engine.failDescribeWith = engine.failStopWith = new Error('connection reset');
    await expect(operations.start({ ownerId: 'o', tool, arguments: { n: 1 }, token: 'lost', dialect: 'sep-1391' })).rejects.toThrow();
    engine.failDescribeWith = engine.failStopWith = undefined;
    engine.describeCalls = 0;
    const [execution] = [...engine.executions.values()];
    await sync(eventFor(execution!.executionArn, execution!.input, { status: 'RUNNING' }));
    expect((await store.get({ ownerId: 'o', token: 'lost' }))?.status).toBe('working');
    expect(engine.describeCalls).toBe(0);
  });

  it('a machine that receives only its arguments: its events find the record by the execution name', async () => {
    const own: ToolSpec = { ...tool, name: 'orders', executionInput: 'arguments' };
    const record = await operations.start({ ownerId: 'o', tool: own, arguments: { order: 7 }, token: 'args-only', dialect: 'sep-1391' });
    const execution = engine.executions.get(record.executionArn!)!;
    expect(execution.input).toEqual({ order: 7 });
    await sync(eventFor(record.executionArn!, execution.input, { status: 'SUCCEEDED', output: '{"shipped":true}', stopDate: Date.now() }));
    expect(await store.get(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { shipped: true } } });
    expect(logged).toEqual([]);
  });

  it('a machine that receives only its arguments, whose arguments look like our envelope, still reaches its own record', async () => {
    const own: ToolSpec = { ...tool, name: 'orders', executionInput: 'arguments' };
    const decoy = { operation: { token: 'someone-else', ownerId: 'o' } };
    const record = await operations.start({ ownerId: 'o', tool: own, arguments: decoy, token: 'real', dialect: 'sep-1391' });
    await sync(eventFor(record.executionArn!, decoy, { status: 'SUCCEEDED', output: '{"ok":true}', stopDate: Date.now() }));
    expect(await store.get(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { ok: true } } });
  });
});
