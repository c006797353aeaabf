/** `.waitForTaskToken` on the local Step Functions facade: tokens, SendTaskSuccess / Failure / Heartbeat. */
import {
  DescribeExecutionCommand,
  InvalidToken,
  SendTaskFailureCommand,
  SendTaskHeartbeatCommand,
  SendTaskSuccessCommand,
  StartExecutionCommand,
  TaskDoesNotExist,
  TaskTimedOut,
} from '@aws-sdk/client-sfn';
import { describe, expect, it, vi } from 'vitest';
import { definition, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

describe('local Step Functions facade: task tokens', () => {
  it('waitForTaskToken: the worker gets $$.Task.Token, and SendTaskSuccess / SendTaskFailure resume the execution', async () => {
    const tokens: string[] = [];
    const { facade, client, describeUntilDone } = await start({
      stateMachines: [
        {
          name: 'ask',
          workflowType: 'STANDARD',
          definitionText: definition({
            Ask: {
              Type: 'Task',
              Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
              Parameters: { FunctionName: '${Worker_request_input}', Payload: { 'taskToken.$': '$$.Task.Token', 'question.$': '$.question' } },
              ResultPath: '$.answer',
              End: true,
            },
          }),
        },
      ],
      resolveWorker: () => async (event) => {
        tokens.push((event as { taskToken: string }).taskToken);
        return null;
      },
    });
    const waitForToken = (count: number) =>
      vi.waitFor(() => {
        expect(tokens).toHaveLength(count);
        return tokens[count - 1]!;
      });

    const yes = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: input({ question: 'ok?' }) }));
    const token = await waitForToken(1);
    await client.send(new SendTaskHeartbeatCommand({ taskToken: token }));
    expect((await client.send(new DescribeExecutionCommand({ executionArn: yes.executionArn }))).status).toBe('RUNNING');
    await client.send(new SendTaskSuccessCommand({ taskToken: token, output: input({ confirmed: true }) }));
    const succeeded = await describeUntilDone(yes.executionArn!);
    expect(JSON.parse(succeeded.output!)).toEqual({ question: 'ok?', answer: { confirmed: true } });
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: token, output: '{}' }))).rejects.toBeInstanceOf(TaskTimedOut);

    const no = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: input({ question: 'sure?' }) }));
    const second = await waitForToken(2);
    expect(second).not.toBe(token);
    await client.send(new SendTaskFailureCommand({ taskToken: second, error: 'Mcp.Declined', cause: 'user declined' }));
    expect(await describeUntilDone(no.executionArn!)).toMatchObject({ status: 'FAILED', error: 'Mcp.Declined', cause: 'user declined' });

    await expect(client.send(new SendTaskSuccessCommand({ taskToken: 'garbage', output: '{}' }))).rejects.toBeInstanceOf(InvalidToken);
    await expect(client.send(new SendTaskSuccessCommand({ taskToken: 'A'.repeat(64), output: '{}' }))).rejects.toBeInstanceOf(TaskDoesNotExist);
  });
});
