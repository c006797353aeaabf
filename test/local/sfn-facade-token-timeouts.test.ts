/**
 * A `.waitForTaskToken` state on the local Step Functions facade times out as it does in AWS:
 * TimeoutSeconds fails it with States.Timeout, HeartbeatSeconds without a heartbeat with
 * States.HeartbeatTimeout, its Catch takes over, and its token answers TaskTimedOut after.
 * The state also reads `$$.State.EnteredTime` (the request-input worker dates its question by it).
 */
import { SendTaskSuccessCommand, StartExecutionCommand, TaskTimedOut } from '@aws-sdk/client-sfn';
import { describe, expect, it, vi } from 'vitest';
import { definition, input, useFacadeHarness } from './sfn-facade-harness.ts';

const { start } = useFacadeHarness();

const WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';

/** A machine whose one waiting state has `bounds`, caught into a Pass that records the error. */
function jsonPathMachine(bounds: Record<string, unknown>): string {
  return definition({
    Ask: {
      Type: 'Task',
      Resource: WAIT,
      Parameters: { FunctionName: '${Worker_request_input}', Payload: { 'taskToken.$': '$$.Task.Token', 'enteredTime.$': '$$.State.EnteredTime' } },
      ...bounds,
      Catch: [{ ErrorEquals: ['States.ALL'], ResultPath: '$.caught', Next: 'Caught' }],
      End: true,
    },
    Caught: { Type: 'Pass', Parameters: { 'error.$': '$.caught.Error' }, End: true },
  });
}

function jsonataMachine(bounds: Record<string, unknown>): string {
  return JSON.stringify({
    QueryLanguage: 'JSONata',
    StartAt: 'Ask',
    States: {
      Ask: {
        Type: 'Task',
        Resource: WAIT,
        Arguments: {
          FunctionName: '${Worker_request_input}',
          Payload: { taskToken: '{% $states.context.Task.Token %}', enteredTime: '{% $states.context.State.EnteredTime %}' },
        },
        ...bounds,
        Catch: [{ ErrorEquals: ['States.ALL'], Output: { error: '{% $states.errorOutput.Error %}' }, Next: 'Caught' }],
        End: true,
      },
      Caught: { Type: 'Pass', End: true },
    },
  });
}

async function runUntilCaught(definitionText: string) {
  const events: Array<{ taskToken: string; enteredTime: string }> = [];
  const { facade, client, describeUntilDone } = await start({
    stateMachines: [{ name: 'ask', workflowType: 'STANDARD', definitionText }],
    resolveWorker: () => async (event) => {
      events.push(event as { taskToken: string; enteredTime: string });
      return null;
    },
  });
  const before = Date.now();
  const started = await client.send(new StartExecutionCommand({ stateMachineArn: facade.stateMachineArn('ask'), input: input({}) }));
  await vi.waitFor(() => expect(events).toHaveLength(1));
  const done = await describeUntilDone(started.executionArn!);
  const elapsedMs = Date.now() - before;
  const late = client.send(new SendTaskSuccessCommand({ taskToken: events[0]!.taskToken, output: '{}' }));
  return { done, elapsedMs, event: events[0]!, before, late };
}

describe('local Step Functions facade: waitForTaskToken timeouts', () => {
  for (const [language, machine] of [
    ['JSONPath', jsonPathMachine],
    ['JSONata', jsonataMachine],
  ] as const) {
    it(`${language}: TimeoutSeconds ends the wait with States.Timeout, the Catch runs, and a late SendTaskSuccess is TaskTimedOut`, async () => {
      const { done, elapsedMs, event, before, late } = await runUntilCaught(machine({ TimeoutSeconds: 1 }));
      expect(done.status).toBe('SUCCEEDED');
      expect(JSON.parse(done.output!)).toEqual({ error: 'States.Timeout' });
      expect(elapsedMs).toBeGreaterThanOrEqual(900);
      expect(Date.parse(event.enteredTime)).toBeGreaterThanOrEqual(before - 1000);
      await expect(late).rejects.toBeInstanceOf(TaskTimedOut);
    });

    it(`${language}: HeartbeatSeconds with no heartbeat ends the wait with States.HeartbeatTimeout before TimeoutSeconds`, async () => {
      const { done, elapsedMs, late } = await runUntilCaught(machine({ TimeoutSeconds: 30, HeartbeatSeconds: 1 }));
      expect(JSON.parse(done.output!)).toEqual({ error: 'States.HeartbeatTimeout' });
      expect(elapsedMs).toBeLessThan(10_000);
      await expect(late).rejects.toBeInstanceOf(TaskTimedOut);
    });
  }
});
