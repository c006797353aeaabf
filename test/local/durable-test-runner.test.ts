import { LocalDurableTestRunner, OperationType } from '@aws/durable-execution-sdk-js-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeHandler } from './durable-handlers.ts';

describe('a durable handler on LocalDurableTestRunner', () => {
  beforeAll(() => LocalDurableTestRunner.setupTestEnvironment({ skipTime: true }));
  afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

  it('runs its steps and its wait in order and returns its progress with the result', async () => {
    const runner = new LocalDurableTestRunner({ handlerFunction: analyzeHandler });
    const execution = await runner.run({ payload: { rows: [1, 2, 3, 4] } });

    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(execution.getResult()).toEqual({
      total: 10,
      progress: [
        { percent: 50, message: '4 rows loaded' },
        { percent: 100, message: 'summed' },
      ],
    });
    const operations = execution.getOperations();
    expect(operations.map((operation) => operation.getName())).toEqual(['load', 'report-loaded', 'cool-down', 'sum', 'report-done']);
    expect(runner.getOperation('cool-down').getType()).toBe(OperationType.WAIT);
    expect(runner.getOperation('cool-down').getWaitDetails()?.waitSeconds).toBe(30);
    expect(runner.getOperation('load').getStepDetails()?.result).toEqual([1, 2, 3, 4]);
  });
});
