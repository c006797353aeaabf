import { describe, expect, it } from 'vitest';
import { durableTaskToken, RoutingWorkflowEngine } from '../../lambdas/aws/routing-workflow-engine.ts';
import type { ExecutionSnapshot, WorkflowEngine } from '../../lambdas/operations/ports.ts';

/** An engine that records each call it receives, by method and first argument. */
function recordingEngine(kind: string, calls: string[]): WorkflowEngine {
  const snapshot = (executionArn: string): ExecutionSnapshot => ({ executionArn, status: 'RUNNING' });
  return {
    executionArnFor: (arn, name) => {
      calls.push(`${kind}.executionArnFor(${arn})`);
      return `${arn}/${name}`;
    },
    start: async (input) => {
      calls.push(`${kind}.start(${input.stateMachineArn})`);
      return { executionArn: input.name };
    },
    startSync: async (input) => {
      calls.push(`${kind}.startSync(${input.stateMachineArn})`);
      return snapshot(input.name);
    },
    describe: async (arn) => {
      calls.push(`${kind}.describe(${arn})`);
      return snapshot(arn);
    },
    stop: async (arn) => {
      calls.push(`${kind}.stop(${arn})`);
    },
    sendTaskSuccess: async (token) => {
      calls.push(`${kind}.sendTaskSuccess(${token})`);
    },
    sendTaskFailure: async (token) => {
      calls.push(`${kind}.sendTaskFailure(${token})`);
    },
  };
}

const machine = 'arn:aws:states:us-east-1:123456789012:stateMachine:analyze';
const execution = 'arn:aws-us-gov:states:us-gov-west-1:123456789012:execution:analyze:n';
const fn = 'arn:aws:lambda:us-east-1:123456789012:function:analyze:$LATEST';
const durableExecution = 'arn:aws-cn:lambda:cn-north-1:123456789012:function:analyze:3/durable-execution/n/id';

describe('RoutingWorkflowEngine', () => {
  it('sends state machine ARNs to Step Functions and function ARNs to the durable engine, in every partition', async () => {
    const calls: string[] = [];
    const engine = new RoutingWorkflowEngine(recordingEngine('sfn', calls), recordingEngine('durable', calls));
    engine.executionArnFor(machine, 'n');
    await engine.start({ stateMachineArn: fn, name: 'n', input: {} });
    await engine.startSync({ stateMachineArn: machine, name: 'n', input: {} });
    await engine.describe(durableExecution);
    await engine.describe(execution);
    await engine.stop(durableExecution, { error: 'E', cause: 'c' });
    expect(calls).toEqual([
      `sfn.executionArnFor(${machine})`,
      `durable.start(${fn})`,
      `sfn.startSync(${machine})`,
      `durable.describe(${durableExecution})`,
      `sfn.describe(${execution})`,
      `durable.stop(${durableExecution})`,
    ]);
  });

  it('sends a durable task token to the durable engine as its bare callback id, and any other token to Step Functions', async () => {
    const calls: string[] = [];
    const engine = new RoutingWorkflowEngine(recordingEngine('sfn', calls), recordingEngine('durable', calls));
    await engine.sendTaskSuccess(durableTaskToken('Y2FsbGJhY2s='), { ok: true });
    await engine.sendTaskFailure(durableTaskToken('Y2FsbGJhY2s='), { error: 'E', cause: 'c' });
    await engine.sendTaskSuccess('AQCEAAAAKgAAAAMAAAAAAAAAAb+sfn+token==', {});
    await engine.sendTaskFailure('AQCEAAAAKgAAAAMAAAAAAAAAAb+sfn+token==', { error: 'E', cause: 'c' });
    expect(calls).toEqual([
      'durable.sendTaskSuccess(Y2FsbGJhY2s=)',
      'durable.sendTaskFailure(Y2FsbGJhY2s=)',
      'sfn.sendTaskSuccess(AQCEAAAAKgAAAAMAAAAAAAAAAb+sfn+token==)',
      'sfn.sendTaskFailure(AQCEAAAAKgAAAAMAAAAAAAAAAb+sfn+token==)',
    ]);
  });
});
