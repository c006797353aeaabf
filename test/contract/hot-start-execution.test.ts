/**
 * A start's StartExecution over the hot wire (lambdas/aws/hot-start-execution.ts): against the
 * local Step Functions facade it answers what the SDK path answers, the engine built on it
 * starts, retries and refuses as the plain engine does, and against a scripted endpoint a
 * throttle is retried with the SDK's backoff and `ExecutionAlreadyExists` is the SDK's error,
 * with nothing sent twice.
 */
import { ExecutionAlreadyExists, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AWS_CLIENT_CONFIG } from '../../lambdas/aws/aws-client-config.ts';
import { countAwsCalls } from '../../lambdas/aws/aws-call-counter.ts';
import { HotStartExecution } from '../../lambdas/aws/hot-start-execution.ts';
import { StepFunctionsEngine } from '../../lambdas/aws/step-functions-engine.ts';
import { startSfnFacade, type SfnFacade } from '../../local/stepfunctions/sfn-facade.ts';
import { verifySigV4 } from '../../local/iam/sigv4-verifier.ts';
import { fromSdk, scriptedServer, type Answer, type Recorded } from './hot-scripted-server.ts';

const CREDENTIALS = { accessKeyId: 'AKIDHOTSTART', secretAccessKey: 'hot-start-secret' };
const facades: SfnFacade[] = [];

afterEach(async () => {
  await Promise.all(facades.splice(0).map((facade) => facade.close()));
});

/** A facade with one STANDARD machine whose only state waits, so executions stay RUNNING. */
async function facadeWithWaitingMachine(): Promise<SfnFacade> {
  const definitionText = JSON.stringify({ StartAt: 'Wait', States: { Wait: { Type: 'Wait', Seconds: 600, End: true } } });
  const facade = await startSfnFacade({
    stateMachines: [{ name: 'waits', workflowType: 'STANDARD', definitionText }],
    resolveWorker: () => async (event) => event,
    logger: { warn: () => {}, error: () => {} },
  });
  facades.push(facade);
  return facade;
}

function clientFor(endpoint: string, extra: { maxAttempts?: number } = {}): SFNClient {
  return new SFNClient({ ...AWS_CLIENT_CONFIG, endpoint, region: 'us-east-1', credentials: CREDENTIALS, disableHostPrefix: true, ...extra });
}

/** Counts the StartExecutions that go through the client's middleware stack, i.e. the SDK path only. */
function sdkPathStarts(client: SFNClient): { count: () => number } {
  let count = 0;
  client.middlewareStack.add(
    (next, context) => (args) => {
      if (context.commandName === 'StartExecutionCommand') count++;
      return next(args);
    },
    { step: 'initialize', name: 'sdkPathStarts' },
  );
  return { count: () => count };
}

describe('the hot StartExecution against the local Step Functions facade', () => {
  it('answers what the SDK path answers, as one call without the middleware stack', async () => {
    const facade = await facadeWithWaitingMachine();
    const client = clientFor(facade.endpoint);
    const stack = sdkPathStarts(client);
    const counter = countAwsCalls(client);
    const stateMachineArn = facade.stateMachineArn('waits');
    const startedAt = Date.now();
    const viaHot = await new HotStartExecution(client).send({ stateMachineArn, name: 'hot-1', input: '{"a":1}' });
    expect(stack.count()).toBe(0);
    expect(counter.snapshot()).toEqual({ StartExecution: 1 });
    expect(counter.attempts()).toEqual({ StartExecution: 1 });
    const viaSdk = await client.send(new StartExecutionCommand({ stateMachineArn, name: 'sdk-1', input: '{"a":1}' }));
    expect(viaHot.executionArn).toBe(viaSdk.executionArn?.replace('sdk-1', 'hot-1'));
    expect(viaHot.startDate).toBeInstanceOf(Date);
    expect(Math.abs((viaHot.startDate as Date).getTime() - startedAt)).toBeLessThan(5_000);
    client.destroy();
  });

  it('the engine on it starts, takes a retry with other input as the same execution and refuses an unknown machine, as the plain engine does', async () => {
    const facade = await facadeWithWaitingMachine();
    const client = clientFor(facade.endpoint);
    const stack = sdkPathStarts(client);
    const hot = new StepFunctionsEngine(client, new HotStartExecution(client));
    const plain = new StepFunctionsEngine(client);
    const stateMachineArn = facade.stateMachineArn('waits');
    const expected = `${stateMachineArn.replace(':stateMachine:', ':execution:')}:op-1`;

    expect(await hot.start({ stateMachineArn, name: 'op-1', input: { a: 1, b: 2 } })).toEqual({ executionArn: expected });
    // The same name again, its arguments in another order: ExecutionAlreadyExists, which names the record's execution.
    expect(await hot.start({ stateMachineArn, name: 'op-1', input: { b: 2, a: 1 } })).toEqual({ executionArn: expected });
    expect(await plain.start({ stateMachineArn, name: 'op-1', input: { b: 2, a: 1 } })).toEqual({ executionArn: expected });
    // Only the refusal went through the stack, deserialized from the hot answer (and the plain engine's own call).
    expect(stack.count()).toBe(2);

    const missing = stateMachineArn.replace('waits', 'missing');
    const viaHot = await hot.start({ stateMachineArn: missing, name: 'op-2', input: {} }).catch((caught: unknown) => caught);
    const viaPlain = await plain.start({ stateMachineArn: missing, name: 'op-2', input: {} }).catch((caught: unknown) => caught);
    expect((viaHot as Error).name).toBe('StateMachineDoesNotExist');
    expect((viaHot as Error).name).toBe((viaPlain as Error).name);
    expect((viaHot as Error).message).toBe((viaPlain as Error).message);
    client.destroy();
  });
});

const THROTTLED: Answer = { status: 400, body: { __type: 'ThrottlingException', message: 'Rate exceeded' } };
const ALREADY_EXISTS: Answer = { status: 400, body: { __type: 'ExecutionAlreadyExists', message: 'Execution Already Exists' } };
const STARTED: Answer = { status: 200, body: { executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:op-1', startDate: 1.76e9 } };
const INPUT = { stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:m', name: 'op-1', input: '{}' };

describe('the hot StartExecution against a scripted endpoint', () => {
  it('is signed with SigV4 for states as the SDK signs it, the AWS JSON 1.0 request the SDK path sends', async () => {
    const server = await scriptedServer([STARTED]);
    const client = clientFor(server.endpoint);
    try {
      const executionArn = (STARTED.body as { executionArn: string }).executionArn;
      expect(await new HotStartExecution(client).send(INPUT)).toEqual({ executionArn, startDate: new Date(1.76e12) });
      await client.send(new StartExecutionCommand(INPUT));
      const [hot, sdk] = server.requests as [Recorded, Recorded];
      expect(fromSdk(hot)).toBe(false);
      expect(JSON.parse(hot.body.toString('utf8'))).toEqual(JSON.parse(sdk.body.toString('utf8')));
      expect(hot.headers['x-amz-target']).toBe('AWSStepFunctions.StartExecution');
      expect(hot.headers['x-amz-target']).toBe(sdk.headers['x-amz-target']);
      expect(hot.headers['content-type']).toBe(sdk.headers['content-type']);
      const received = {
        method: hot.method ?? '',
        host: hot.headers.host ?? '',
        path: hot.url ?? '/',
        query: new URLSearchParams(),
        headers: Object.fromEntries(Object.entries(hot.headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(',') : (value ?? '')])),
        body: new Uint8Array(hot.body),
      };
      const lookup = (id: string) => (id === CREDENTIALS.accessKeyId ? CREDENTIALS : undefined);
      expect((await verifySigV4(received, { service: 'states', region: 'us-east-1', lookup })).ok).toBe(true);
      expect((await verifySigV4(received, { service: 'dynamodb', region: 'us-east-1', lookup })).ok).toBe(false);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it("a throttle is the SDK's first attempt: the next goes after its backoff, and the start is one call", async () => {
    const random = vi.spyOn(Math, 'random').mockReturnValue(0.5);
    const server = await scriptedServer([THROTTLED, THROTTLED, STARTED]);
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    const counter = countAwsCalls(client);
    try {
      const answer = await new HotStartExecution(client).send(INPUT);
      expect(answer.executionArn).toBe((STARTED.body as { executionArn: string }).executionArn);
      expect(server.requests.map((r) => r.headers['amz-sdk-request'])).toEqual([undefined, 'attempt=2; max=3', 'attempt=3; max=3']);
      const gaps = server.requests.slice(1).map((r, i) => r.at - (server.requests[i] as Recorded).at);
      expect(gaps[0]).toBeGreaterThanOrEqual(450);
      expect(gaps[1]).toBeGreaterThanOrEqual(950);
      expect(counter.snapshot()).toEqual({ StartExecution: 1 });
      expect(counter.attempts()).toEqual({ StartExecution: 3 });
    } finally {
      random.mockRestore();
      client.destroy();
      await server.close();
    }
  });

  it('throttled on every attempt, the caller sees the SDK’s ThrottlingException after its attempts and no more', async () => {
    const server = await scriptedServer([THROTTLED]);
    const client = clientFor(server.endpoint, { maxAttempts: 1 });
    try {
      const error = await new HotStartExecution(client).send(INPUT).catch((caught: unknown) => caught);
      // Not a modeled error of Step Functions': the SDK's generic service error of that name.
      expect(error).toMatchObject({ name: 'ThrottlingException', message: 'Rate exceeded', $fault: 'client', $metadata: { httpStatusCode: 400, attempts: 1 } });
      expect(server.requests).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it("ExecutionAlreadyExists is the SDK's error, deserialized from the hot answer, with nothing sent again", async () => {
    const server = await scriptedServer([ALREADY_EXISTS]);
    const client = clientFor(server.endpoint, { maxAttempts: 3 });
    try {
      const error = await new HotStartExecution(client).send(INPUT).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ExecutionAlreadyExists);
      expect(server.requests).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });

  it('a 200 it does not read (a field a newer API adds) is read by the SDK from the hot answer, not started again', async () => {
    const server = await scriptedServer([{ status: 200, body: { ...(STARTED.body as object), newField: 'x' } }]);
    const client = clientFor(server.endpoint);
    const stack = sdkPathStarts(client);
    try {
      const answer = await new HotStartExecution(client).send(INPUT);
      expect(answer).toMatchObject({ executionArn: (STARTED.body as { executionArn: string }).executionArn, startDate: new Date(1.76e12) });
      expect(stack.count()).toBe(1);
      expect(server.requests).toHaveLength(1);
    } finally {
      client.destroy();
      await server.close();
    }
  });
});
