/**
 * The local durable service answers as Lambda's model (the one `@aws-sdk/client-lambda` is
 * generated from) says Lambda answers; where the two differed, the model won. Each error goes
 * out with its model's status and members and reaches the unmodified client typed; a callback
 * that expired or was closed is CallbackTimeoutException, and StopDurableExecution lists no
 * conflict: stopping an ended execution changes nothing.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as lambdaModel from '@aws-sdk/client-lambda';
import {
  CallbackTimeoutException,
  GetDurableExecutionCommand,
  GetDurableExecutionCommand as ProbeCommand,
  GetDurableExecutionStateCommand,
  LambdaClient,
  ResourceNotFoundException,
  SendDurableExecutionCallbackFailureCommand,
  SendDurableExecutionCallbackHeartbeatCommand,
  SendDurableExecutionCallbackSuccessCommand,
  StopDurableExecutionCommand,
} from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LAMBDA_ERROR_NAMES, LambdaApiError } from '../../local/durable/lambda-api-error.ts';
import { callbackIdFor } from './durable-handlers.ts';
import { type DurableHarness, startDurableHarness } from './durable-harness.ts';

/** An error's model in the client: [kind, namespace, name, { error, httpError }, member names, member types]. */
function modelOf(name: string): { status: number; members: string[] } {
  const schema = (lambdaModel as unknown as Record<string, [number, string, string, { httpError: number }, string[]]>)[`${name}$`];
  if (!schema) throw new Error(`no model of ${name}`);
  return { status: schema[3].httpError, members: schema[4] };
}

describe("the local durable service's errors, held to Lambda's model", () => {
  it.each(LAMBDA_ERROR_NAMES)('%s goes out with its model status and members, and the Lambda client raises it typed', async (name) => {
    const response = new LambdaApiError(name, `a ${name} from the local service`).toResponse();
    const model = modelOf(name);
    expect(response.status).toBe(model.status);
    expect(response.headers.get('x-amzn-errortype')).toBe(name);
    const body = (await response.clone().json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual([...model.members].sort());

    const text = await response.text();
    const server = createServer((_request, reply) => {
      reply.writeHead(response.status, Object.fromEntries(response.headers));
      reply.end(text);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new LambdaClient({
      endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      region: 'us-east-1',
      credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
      maxAttempts: 1,
    });
    try {
      const arn = 'arn:aws:lambda:us-east-1:000000000000:function:f:$LATEST/durable-execution/n/i';
      const error = await client.send(new ProbeCommand({ DurableExecutionArn: arn })).catch((caught: unknown) => caught);
      const Expected = (lambdaModel as unknown as Record<string, new (...args: never[]) => Error>)[name] as new (...args: never[]) => Error;
      expect(error).toBeInstanceOf(Expected);
      expect(error).toMatchObject({ name, message: `a ${name} from the local service`, $metadata: { httpStatusCode: model.status } });
    } finally {
      client.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe("callbacks and stop on the local durable service, as Lambda's model answers them", () => {
  let harness: DurableHarness;
  beforeAll(async () => {
    harness = await startDurableHarness();
  });
  afterAll(() => harness.close());

  const success = (CallbackId: string) =>
    harness.lambda.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId, Result: new TextEncoder().encode('"yes"') }));
  const failure = (CallbackId: string) =>
    harness.lambda.send(new SendDurableExecutionCallbackFailureCommand({ CallbackId, Error: { ErrorType: 'Rejected', ErrorMessage: 'no' } }));
  const heartbeat = (CallbackId: string) => harness.lambda.send(new SendDurableExecutionCallbackHeartbeatCommand({ CallbackId }));

  /** Each answer to a closed callback is CallbackTimeoutException, HTTP 400, as Lambda's model says. */
  async function expectClosed(callbackId: string): Promise<void> {
    for (const send of [success, failure, heartbeat]) {
      const error = await send(callbackId).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(CallbackTimeoutException);
      expect((error as CallbackTimeoutException).$metadata.httpStatusCode).toBe(400);
    }
  }

  it('a callback that timed out is CallbackTimeoutException, while its execution still runs', async () => {
    const arn = await harness.start('callback-then-wait', { key: 'expires', timeoutSeconds: 1 }, 'expires');
    const callbackId = await callbackIdFor('expires');
    await vi.waitFor(
      async () => {
        const state = await harness.lambda.send(new GetDurableExecutionStateCommand({ DurableExecutionArn: arn, CheckpointToken: undefined as never }));
        expect(state.Operations?.find((operation) => operation.Type === 'CALLBACK')?.Status).toBe('TIMED_OUT');
      },
      { interval: 100, timeout: 10_000 },
    );
    await expectClosed(callbackId);
    expect((await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status).toBe('RUNNING');
    await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn }));
  });

  it('a callback answered already is CallbackTimeoutException: the first answer stands', async () => {
    const arn = await harness.start('callback-then-wait', { key: 'answered', timeoutSeconds: 3600 }, 'answered');
    const callbackId = await callbackIdFor('answered');
    await success(callbackId);
    await expectClosed(callbackId);
    expect((await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).Status).toBe('RUNNING');
    await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn }));
  });

  it('a callback of an execution that ended is CallbackTimeoutException', async () => {
    const arn = await harness.start('callback-then-wait', { key: 'ended', timeoutSeconds: 3600 }, 'ended');
    const callbackId = await callbackIdFor('ended');
    await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn }));
    await expectClosed(callbackId);
  });

  it('a callback id that names no execution is ResourceNotFoundException', async () => {
    const unknown = Buffer.from(JSON.stringify({ executionId: 'no-such-execution', operationId: 'op' })).toString('base64');
    await expect(success(unknown)).rejects.toBeInstanceOf(ResourceNotFoundException);
  });

  it('StopDurableExecution on an ended execution changes nothing and answers when it ended: the model lists no conflict', async () => {
    const arn = await harness.start('long-wait', {}, 'stopped-twice');
    await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: arn, Error: { ErrorType: 'Cancelled', ErrorMessage: 'first' } }));
    const ended = await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    const again = await harness.lambda.send(
      new StopDurableExecutionCommand({ DurableExecutionArn: arn, Error: { ErrorType: 'Other', ErrorMessage: 'second' } }),
    );
    expect(again.StopTimestamp).toEqual(ended.EndTimestamp);
    expect(await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).toMatchObject({
      Status: 'STOPPED',
      Error: { ErrorType: 'Cancelled', ErrorMessage: 'first' },
      EndTimestamp: ended.EndTimestamp,
    });

    const succeeded = await harness.settled(await harness.start('steps', { value: 1 }, 'stop-after-success'));
    const stopped = await harness.lambda.send(new StopDurableExecutionCommand({ DurableExecutionArn: succeeded.DurableExecutionArn }));
    expect(stopped.StopTimestamp).toEqual(succeeded.EndTimestamp);
    expect((await harness.lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: succeeded.DurableExecutionArn }))).Status).toBe('SUCCEEDED');
  });
});
