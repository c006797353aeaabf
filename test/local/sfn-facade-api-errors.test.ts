/** The errors the local Step Functions facade answers, as the service names them, and the definitions it refuses. */
import {
  DescribeExecutionCommand,
  ExecutionDoesNotExist,
  InvalidArn,
  InvalidExecutionInput,
  InvalidName,
  ListExecutionsCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  StartSyncExecutionCommand,
  StateMachineDoesNotExist,
  StateMachineTypeNotSupported,
  StopExecutionCommand,
} from '@aws-sdk/client-sfn';
import { describe, expect, it } from 'vitest';
import { startSfnFacade } from '../../local/stepfunctions/sfn-facade.ts';
import { definition, useFacadeHarness } from './sfn-facade-harness.ts';

const { start, logger } = useFacadeHarness();

describe('local Step Functions facade: API errors', () => {
  it('answers bad requests with the typed errors of the service, never crashing', async () => {
    const { facade, client } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
    });
    const machineArn = facade.stateMachineArn('m');
    await expect(client.send(new DescribeExecutionCommand({ executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:nope' }))).rejects.toBeInstanceOf(
      ExecutionDoesNotExist,
    );
    await expect(client.send(new DescribeExecutionCommand({ executionArn: 'not-an-arn' }))).rejects.toBeInstanceOf(InvalidArn);
    await expect(
      client.send(new StartExecutionCommand({ stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:missing' })),
    ).rejects.toBeInstanceOf(StateMachineDoesNotExist);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'has space' }))).rejects.toBeInstanceOf(InvalidName);
    // The length of a name is a model constraint: ValidationException, as the service answers, not InvalidName.
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'x'.repeat(81) }))).rejects.toMatchObject({
      name: 'ValidationException',
      message: `1 validation error detected: Value '${'x'.repeat(81)}' at 'name' failed to satisfy constraint: Member must have length less than or equal to 80`,
    });
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, input: '{not json' }))).rejects.toBeInstanceOf(InvalidExecutionInput);
    await expect(client.send(new StartSyncExecutionCommand({ stateMachineArn: machineArn }))).rejects.toBeInstanceOf(StateMachineTypeNotSupported);

    const post = (target: string, body: string) =>
      fetch(facade.endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
        body,
      }).then(async (res) => ({ status: res.status, body: (await res.json()) as { __type: string; message: string } }));
    expect(await post('AWSStepFunctions.DeleteStateMachine', '{}')).toMatchObject({ status: 400, body: { __type: 'UnknownOperationException' } });
    expect(await post('AWSStepFunctions.toString', '{}')).toMatchObject({ status: 400, body: { __type: 'UnknownOperationException' } });
    expect(await post('AWSStepFunctions.StartExecution', '{"stateMachineArn":')).toMatchObject({
      status: 400,
      body: { __type: 'SerializationException' },
    });
    expect(await post('AWSStepFunctions.DescribeExecution', '{}')).toMatchObject({ status: 400, body: { __type: 'ValidationException' } });
    expect(await post('AWSStepFunctions.DescribeExecution', '[]')).toMatchObject({ status: 400, body: { __type: 'SerializationException' } });

    // Still serving after all of that.
    const ok = await client.send(new StartExecutionCommand({ stateMachineArn: machineArn }));
    expect(ok.executionArn).toMatch(/^arn:aws:states:us-east-1:000000000000:execution:m:[0-9a-f-]{36}$/);
  });

  it('refuses definitions the local runtime would run differently, naming the state', async () => {
    await expect(
      startSfnFacade({
        stateMachines: [
          {
            name: 'remote',
            workflowType: 'STANDARD',
            definitionText: definition({ Put: { Type: 'Task', Resource: 'arn:aws:states:::dynamodb:putItem', End: true } }),
          },
        ],
        resolveWorker: () => async () => null,
        logger,
      }),
    ).rejects.toThrow(/state "Put" uses Resource "arn:aws:states:::dynamodb:putItem"/);
    await expect(startSfnFacade({ stateMachines: [], resolveWorker: () => async () => null, host: '0.0.0.0', logger })).rejects.toThrow(/loopback/);
  });

  it('StartExecution input over 262,144 bytes of UTF-8 is a ValidationException, checked before anything else, and starts nothing', async () => {
    const { facade, client } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
    });
    const machineArn = facade.stateMachineArn('m');
    const tooLarge = {
      name: 'ValidationException',
      message:
        "1 validation error detected: Value at 'input' failed to satisfy constraint: Member must have size less than or equal to 262144 bytes in UTF-8 encoding",
    };
    /** A JSON string of exactly `bytes` bytes of UTF-8: `unit` characters, padded with 'x'. */
    const sized = (bytes: number, unit = 'x') => {
      const count = Math.floor((bytes - 2) / Buffer.byteLength(unit));
      return JSON.stringify(unit.repeat(count) + 'x'.repeat(bytes - 2 - count * Buffer.byteLength(unit)));
    };
    expect(Buffer.byteLength(sized(262_145))).toBe(262_145);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'big', input: sized(262_145) }))).rejects.toMatchObject(tooLarge);
    // Bytes, not characters: 131,072 two-byte characters are fewer characters than the limit but more bytes.
    const wide = sized(262_146, 'é');
    expect(wide.length).toBeLessThan(262_144);
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'wide', input: wide }))).rejects.toMatchObject(tooLarge);
    // A model constraint comes before the state machine's existence, and before the name's characters.
    const missing = 'arn:aws:states:us-east-1:000000000000:stateMachine:missing';
    await expect(client.send(new StartExecutionCommand({ stateMachineArn: missing, name: 'bad name', input: sized(262_145) }))).rejects.toMatchObject(tooLarge);
    expect((await client.send(new ListExecutionsCommand({ stateMachineArn: machineArn }))).executions).toEqual([]);

    const atLimit = await client.send(new StartExecutionCommand({ stateMachineArn: machineArn, name: 'at-limit', input: sized(262_144) }));
    expect(atLimit.executionArn).toMatch(/:execution:m:at-limit$/);
  });

  it('SendTaskSuccess output over 262,144 bytes is a ValidationException, checked before the token', async () => {
    const { client } = await start({ stateMachines: [] });
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: 'A'.repeat(64), output: JSON.stringify('x'.repeat(262_144)) }))).rejects.toMatchObject({
      name: 'ValidationException',
      message:
        "1 validation error detected: Value at 'output' failed to satisfy constraint: Member must have size less than or equal to 262144 bytes in UTF-8 encoding",
    });
  });

  it('StopExecution and DescribeExecution of an execution that does not exist are ExecutionDoesNotExist; a missing member is "must not be null"', async () => {
    const { facade, client } = await start({
      stateMachines: [{ name: 'm', workflowType: 'STANDARD', definitionText: definition({ Done: { Type: 'Succeed' } }) }],
    });
    const unknown = 'arn:aws:states:us-east-1:000000000000:execution:m:never-started';
    await expect(client.send(new StopExecutionCommand({ executionArn: unknown }))).rejects.toBeInstanceOf(ExecutionDoesNotExist);
    await expect(client.send(new DescribeExecutionCommand({ executionArn: unknown }))).rejects.toMatchObject({
      name: 'ExecutionDoesNotExist',
      message: `Execution Does Not Exist: '${unknown}'`,
    });
    const response = await fetch(facade.endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': 'AWSStepFunctions.StartExecution' },
      body: JSON.stringify({ name: 'n' }),
    });
    expect({ status: response.status, body: await response.json() }).toEqual({
      status: 400,
      body: {
        __type: 'ValidationException',
        message: "1 validation error detected: Value null at 'stateMachineArn' failed to satisfy constraint: Member must not be null",
      },
    });
  });
});
