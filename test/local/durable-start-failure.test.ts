import { DurableExecutionApiClient, type DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { describe, expect, it } from 'vitest';
import type { CheckpointWorkerClient } from '../../local/durable/checkpoint-worker-client.ts';
import { DurableExecutionService } from '../../local/durable/durable-execution-service.ts';

describe('a durable execution whose start fails', () => {
  it('answers ServiceException and leaves its name free, so a retried start is a new execution', async () => {
    let starts = 0;
    // The checkpoint backend refuses the first start only: a fault the real worker cannot be made
    // to raise. Every other call stays unanswered, so nothing runs past the start.
    const worker = {
      call: async (api: string) => {
        if (api !== 'StartDurableExecution') return new Promise(() => {});
        starts += 1;
        if (starts === 1) throw new Error('checkpoint worker exited');
        return {
          executionId: 'worker-execution',
          checkpointToken: 'token',
          invocationId: 'invocation',
          operationEvents: [{ operation: { Id: 'execution', Type: 'EXECUTION', Status: 'STARTED' } }],
          updatedOperationIds: [],
        };
      },
    } as unknown as CheckpointWorkerClient;
    const service = new DurableExecutionService(worker, () => new DurableExecutionApiClient(), {
      region: 'us-east-1',
      accountId: '000000000000',
    });
    const neverReturns: DurableLambdaHandler = () => new Promise(() => {});
    service.register('tool', neverReturns);

    await expect(service.start('tool', 'retried', '{"value":1}')).rejects.toMatchObject({ type: 'ServiceException' });
    expect(service.list('tool', {})).toEqual([]);
    const retried = await service.start('tool', 'retried', '{"value":2}');
    expect(service.list('tool', {})).toEqual([
      expect.objectContaining({ DurableExecutionArn: retried.arn, DurableExecutionName: 'retried', Status: 'RUNNING' }),
    ]);
  });
});
