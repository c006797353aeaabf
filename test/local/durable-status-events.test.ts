import { InvokeCommand, LambdaClient, StopDurableExecutionCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DURABLE_STATUS_CHANGE_DETAIL_TYPE, DURABLE_STATUS_CHANGE_SOURCE, type DurableStatusChangeEvent } from '../../lambdas/aws/durable-status-events.ts';
import { type LocalDurableService, startLocalDurableService } from '../../local/durable/index.ts';
import { failingHandler, longWaitHandler, stepsHandler } from './durable-handlers.ts';

describe('status-change events of the local durable service', () => {
  let local: LocalDurableService;
  let lambda: LambdaClient;
  const events: DurableStatusChangeEvent[] = [];
  /** What GetDurableExecution answered for each event's execution as the event went out. */
  const describedAtEvent: string[] = [];
  const endEvents = new Map<string, DurableStatusChangeEvent>();
  const endWaiters = new Map<string, (event: DurableStatusChangeEvent) => void>();
  const endOf = (arn: string) =>
    new Promise<DurableStatusChangeEvent>((resolve) => {
      const event = endEvents.get(arn);
      if (event) resolve(event);
      else endWaiters.set(arn, resolve);
    });

  beforeAll(async () => {
    local = await startLocalDurableService({
      functions: { steps: stepsHandler, failing: failingHandler, 'long-wait': longWaitHandler },
      region: 'eu-west-1',
      accountId: '123456789012',
      onStatusChange: (event) => {
        events.push(event);
        describedAtEvent.push(local.service.describe(event.detail.durableExecutionArn).Status);
        if (event.detail.status === 'RUNNING') return;
        endEvents.set(event.detail.durableExecutionArn, event);
        endWaiters.get(event.detail.durableExecutionArn)?.(event);
      },
    });
    lambda = new LambdaClient({ endpoint: local.endpoint, region: 'eu-west-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  });
  afterAll(async () => {
    lambda.destroy();
    await local.close();
  });

  const start = async (functionName: string, payload: unknown, name: string) => {
    const output = await lambda.send(
      new InvokeCommand({
        FunctionName: functionName,
        InvocationType: 'Event',
        DurableExecutionName: name,
        Payload: new TextEncoder().encode(JSON.stringify(payload)),
      }),
    );
    return output.DurableExecutionArn ?? '';
  };
  const eventsOf = (arn: string) => events.filter((event) => event.detail.durableExecutionArn === arn);

  it('an execution that succeeds sends RUNNING then SUCCEEDED, each shaped as EventBridge delivers Lambda events', async () => {
    const arn = await start('steps', { value: 2 }, 'announced');
    await endOf(arn);
    const [running, succeeded] = eventsOf(arn);
    expect(eventsOf(arn)).toHaveLength(2);
    const functionArn = 'arn:aws:lambda:eu-west-1:123456789012:function:steps';
    expect(running).toEqual({
      version: '0',
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      'detail-type': DURABLE_STATUS_CHANGE_DETAIL_TYPE,
      source: DURABLE_STATUS_CHANGE_SOURCE,
      account: '123456789012',
      time: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/),
      region: 'eu-west-1',
      resources: [arn],
      detail: { durableExecutionArn: arn, durableExecutionName: 'announced', functionArn, status: 'RUNNING', startTimestamp: expect.any(String) },
    });
    expect(succeeded?.detail).toEqual({
      durableExecutionArn: arn,
      durableExecutionName: 'announced',
      functionArn,
      status: 'SUCCEEDED',
      startTimestamp: running?.detail.startTimestamp,
      endTimestamp: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(succeeded?.id).not.toBe(running?.id);
  });

  it('each end event goes out once GetDurableExecution answers that end: FAILED and STOPPED too', async () => {
    const failed = await start('failing', {}, 'announced-failure');
    expect((await endOf(failed)).detail.status).toBe('FAILED');
    const stopped = await start('long-wait', {}, 'announced-stop');
    await lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: stopped }));
    expect((await endOf(stopped)).detail.status).toBe('STOPPED');
    expect(eventsOf(stopped).map((event) => event.detail.status)).toEqual(['RUNNING', 'STOPPED']);
    expect(describedAtEvent).toEqual(events.map((event) => event.detail.status));
  });

  it('a second start of the same name and payload is the same execution and sends no second RUNNING', async () => {
    const arn = await start('steps', { value: 3 }, 'started-twice');
    await endOf(arn);
    expect(await start('steps', { value: 3 }, 'started-twice')).toBe(arn);
    expect(eventsOf(arn).map((event) => event.detail.status)).toEqual(['RUNNING', 'SUCCEEDED']);
  });
});
