/**
 * A WorkflowEngine whose engine (and its AWS SDK client) is loaded on its first call: a cold
 * start, a poll and tools/list never reach the workflow service, so they do not pay for the
 * client's import. An execution's ARN is derived without loading anything.
 */
import type { WorkflowEngine } from '../operations/ports.ts';

export function deferredWorkflowEngine(executionArnFor: WorkflowEngine['executionArnFor'], load: () => Promise<WorkflowEngine>): WorkflowEngine {
  let loaded: Promise<WorkflowEngine> | undefined;
  const engine = () => (loaded ??= load());
  return {
    executionArnFor,
    start: async (input) => (await engine()).start(input),
    startSync: async (input, signal) => (await engine()).startSync(input, signal),
    describe: async (executionArn) => (await engine()).describe(executionArn),
    stop: async (executionArn, reason) => (await engine()).stop(executionArn, reason),
    sendTaskSuccess: async (taskToken, output) => (await engine()).sendTaskSuccess(taskToken, output),
    sendTaskFailure: async (taskToken, failure) => (await engine()).sendTaskFailure(taskToken, failure),
  };
}
