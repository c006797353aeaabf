/**
 * Status sync takes a Lambda durable execution's status-change event as it takes a Step
 * Functions one: the event holds no input or result, so the execution is read, and the
 * record named by its input (or by the execution's name) is settled.
 */
import { beforeEach, describe, expect, it } from 'vitest';
import { DURABLE_STATUS_CHANGE_DETAIL_TYPE, DURABLE_STATUS_CHANGE_SOURCE, type DurableStatusChangeEvent } from '../../lambdas/aws/durable-status-events.ts';
import { createStatusSyncHandler } from '../../lambdas/aws/status-sync.ts';
import { mcpInputProtocol } from '../../lambdas/mcp/input/mcp-input-protocol.ts';
import { createOperations, DEFAULT_LIMITS, type OperationsService } from '../../lambdas/operations/operations-service.ts';
import type { ExecutionSnapshot } from '../../lambdas/operations/ports.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const FUNCTION_ARN = 'arn:aws:lambda:us-east-1:123456789012:function:srv-count_primes:live';

/** Durable ARNs: the core's `by-name` one before the start answers, an assigned id in events. */
class FakeDurableEngine extends FakeWorkflowEngine {
  override executionArnFor(functionArn: string, name: string): string {
    return `${functionArn}/durable-execution/${name}/by-name`;
  }

  override async describe(executionArn: string): Promise<ExecutionSnapshot> {
    const byName = executionArn.replace(/\/[^/]+$/, '/by-name');
    return { ...(await super.describe(byName)), executionArn };
  }
}

const tool: ToolSpec = testTool({
  name: 'count_primes',
  stateMachineArn: FUNCTION_ARN,
  timing: { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 5, syncTimeoutSeconds: 5, maxRunSeconds: 3600 },
});

function durableEvent(executionArn: string, status: string): DurableStatusChangeEvent {
  return {
    id: 'evt-durable-1',
    source: DURABLE_STATUS_CHANGE_SOURCE,
    'detail-type': DURABLE_STATUS_CHANGE_DETAIL_TYPE,
    time: new Date().toISOString(),
    detail: {
      durableExecutionArn: executionArn,
      durableExecutionName: executionArn.split('/')[2],
      functionArn: FUNCTION_ARN,
      status,
      startTimestamp: new Date().toISOString(),
      ...(status === 'RUNNING' ? {} : { endTimestamp: new Date().toISOString() }),
    },
  };
}

describe('status sync of durable executions', () => {
  let store: InMemoryRecordStore;
  let engine: FakeDurableEngine;
  let operations: OperationsService;
  let sync: ReturnType<typeof createStatusSyncHandler>;
  const logged: unknown[] = [];

  beforeEach(() => {
    store = new InMemoryRecordStore();
    engine = new FakeDurableEngine();
    operations = createOperations({ store, engine, limits: DEFAULT_LIMITS, input: mcpInputProtocol });
    logged.length = 0;
    sync = createStatusSyncHandler(operations, engine, { error: (_m, fields) => logged.push(fields), warn: (_m, fields) => logged.push(fields) });
  });

  async function started() {
    const record = await operations.start({ ownerId: 'o', tool, arguments: { below: 100 }, token: 't', dialect: 'sep-1391' });
    const assigned = record.executionArn!.replace(/by-name$/, '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0');
    return { record, assigned };
  }

  it('a SUCCEEDED event settles the record with the result GetDurableExecution reads', async () => {
    const { record, assigned } = await started();
    engine.finish(record.executionArn!, { status: 'SUCCEEDED', output: { structuredContent: { primes: 25 } } });
    await sync(durableEvent(assigned, 'SUCCEEDED'));
    expect(await store.get(record)).toMatchObject({ status: 'completed', outcome: { kind: 'result', output: { structuredContent: { primes: 25 } } } });
    expect(logged).toEqual([]);
  });

  it('a STOPPED execution is the cancelled end Step Functions calls ABORTED', async () => {
    const { record, assigned } = await started();
    engine.finish(record.executionArn!, { status: 'ABORTED', error: 'Mcp.Canceled', cause: 'stopped' });
    await sync(durableEvent(assigned, 'STOPPED'));
    expect((await store.get(record))?.status).toBe('canceled');
  });

  it('a RUNNING event delivered after the end settles the end it reads, and reports no stale working', async () => {
    const { record, assigned } = await started();
    engine.finish(record.executionArn!, { status: 'FAILED', error: 'RangeError', cause: 'below must be at least 2' });
    await sync(durableEvent(assigned, 'RUNNING'));
    expect(await store.get(record)).toMatchObject({ status: 'failed' });
  });
});
