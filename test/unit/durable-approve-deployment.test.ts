/**
 * approve_deployment_durable on the testing SDK's LocalDurableTestRunner, its helpers writing
 * into the in-memory core: the question waits on the operation under its key, the client's
 * answer goes through the core and the routing engine to the runner's callback API, and the
 * run deploys only what was approved.
 */
import { LocalDurableTestRunner, WaitingOperationStatus } from '@aws/durable-execution-sdk-js-testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { durableTaskToken } from '../../lambdas/aws/routing-workflow-engine.ts';
import { shapeFinishedResult } from '../../lambdas/mcp/results/result-shaping.ts';
import { INPUT_ERRORS } from '../../lambdas/operations/input-requests.ts';
import { handler } from '../../state-machines/approve_deployment_durable/durable.ts';
import { durableTool, startDurableTool } from './durable-tool-harness.ts';

const tool = await durableTool('approve_deployment_durable');
const request = { environment: 'staging', changes: ['api: v2.3.1', 'web: v1.9.0'] };
const ELICITATION = { elicitation: {} };

beforeAll(() => LocalDurableTestRunner.setupTestEnvironment({ skipTime: true }));
afterAll(() => LocalDurableTestRunner.teardownTestEnvironment());

/** Starts the tool for a client that can answer elicitations and waits until its question is stored. */
async function askedForApproval() {
  const run = await startDurableTool(tool, handler, request, { clientCapabilities: ELICITATION, callbacks: ['approval'] });
  await run.runner.getOperation('approval-ask').waitForData(WaitingOperationStatus.COMPLETED);
  return run;
}

describe('approve_deployment_durable', () => {
  it('asks for approval under the key approval, with the callback id as the task token, and the operation is input_required', async () => {
    const run = await askedForApproval();
    const record = await run.current();
    expect(record.status).toBe('input_required');
    const question = record.pendingInputs?.approval;
    expect(question?.request).toEqual({
      method: 'elicitation/create',
      params: {
        message: 'Deploy 2 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0',
        requestedSchema: expect.objectContaining({ properties: { comment: expect.objectContaining({ type: 'string' }) } }),
      },
    });
    const callbackId = run.runner.getOperation('approval').getCallbackDetails()?.callbackId;
    expect(question?.taskToken).toBe(durableTaskToken(callbackId ?? ''));
    // The question closes when the callback times out (an hour): its deadline says so.
    expect(question?.deadline).toBeGreaterThan(Date.now() + 59 * 60_000);
    await run.service.inputs.answer(run.key, { approval: { result: { action: 'decline' } } });
    await run.run;
  });

  it('an accepted answer, delivered through the core to the callback, deploys every change and reports the comment', async () => {
    const run = await askedForApproval();
    const outcome = await run.service.inputs.answer(run.key, { approval: { result: { action: 'accept', content: { comment: 'ship it' } } } });
    expect(outcome.resumed).toEqual(['approval']);
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(run.callbacks.answered.map(({ name }) => name)).toEqual(['approval']);
    const shaped = shapeFinishedResult({ kind: 'result', output: execution.getResult() }, tool);
    expect(shaped).toMatchObject({
      kind: 'call-tool-result',
      result: {
        structuredContent: {
          environment: 'staging',
          planned: 2,
          deployed: true,
          decision: 'accept',
          comment: 'ship it',
          changes: [
            { step: 1, change: 'api: v2.3.1', status: 'deployed' },
            { step: 2, change: 'web: v1.9.0', status: 'deployed' },
          ],
        },
        content: [{ type: 'text', text: 'Deployed 2 changes to staging. Comment: ship it' }],
      },
    });
    const record = await run.current();
    expect(record.status).toBe('working');
    expect(record.pendingInputs).toBeUndefined();
  });

  it('a replay after the answer does not report progress twice', async () => {
    const run = await askedForApproval();
    await run.service.inputs.answer(run.key, { approval: { result: { action: 'accept' } } });
    expect((await run.run).getStatus()).toBe('SUCCEEDED');
    // The answer resumed the run in a new invocation, which replayed the report made before the question.
    expect(run.invocations()).toBeGreaterThan(1);
    const reports = (await run.current()).reports ?? [];
    expect(reports.map((report) => (report.kind === 'progress' ? report.progress : undefined))).toEqual([1, 2, 3]);
  });

  it("a declined approval deploys nothing and reports it, as approve_deployment's result does", async () => {
    const run = await askedForApproval();
    await run.service.inputs.answer(run.key, { approval: { result: { action: 'decline' } } });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('SUCCEEDED');
    expect(run.callbacks.taskCalls.map((call) => call.failure?.error)).toEqual([INPUT_ERRORS.declined]);
    const summary = 'Deployed nothing to staging: the approver declined.';
    expect(execution.getResult()).toMatchObject({
      structuredContent: { deployed: false, decision: 'decline', summary },
      content: [{ type: 'text', text: summary }],
    });
    expect(shapeFinishedResult({ kind: 'result', output: execution.getResult() }, tool)).toMatchObject({
      kind: 'call-tool-result',
      result: { structuredContent: { deployed: false } },
    });
    expect(execution.getOperations().map((operation) => operation.getName())).not.toContain('deploy');
  });

  it('a dismissed question (cancel) deploys nothing either', async () => {
    const run = await askedForApproval();
    await run.service.inputs.answer(run.key, { approval: { result: { action: 'cancel' } } });
    expect((await run.run).getResult()).toMatchObject({
      structuredContent: { deployed: false, decision: 'cancel' },
      content: [{ type: 'text', text: 'Deployed nothing to staging: the approver dismissed the question.' }],
    });
  });

  it('an error response to the question fails the run with Mcp.InputError and its cause, as the state would fail', async () => {
    const run = await askedForApproval();
    await run.service.inputs.answer(run.key, { approval: { error: { code: -32603, message: 'the form broke' } } });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('FAILED');
    expect(execution.getError()).toMatchObject({ errorType: INPUT_ERRORS.error, errorMessage: JSON.stringify({ code: -32603, message: 'the form broke' }) });
  });

  it('a client that cannot answer elicitations fails the run with Mcp.CapabilityMissing, as the worker fails its state', async () => {
    const run = await startDurableTool(tool, handler, request, { clientCapabilities: {} });
    const execution = await run.run;
    expect(execution.getStatus()).toBe('FAILED');
    expect(execution.getError()).toMatchObject({ errorType: INPUT_ERRORS.capabilityMissing });
    expect((await run.current()).pendingInputs).toBeUndefined();
  });
});
