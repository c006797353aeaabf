/**
 * The example tool approve_deployment end to end on the local stack, over the Tasks
 * extension wire (raw 2026-07-28 JSON-RPC): the call returns a task, the task waits in
 * `input_required` with the approval question in tasks/get's `inputRequests`, the client
 * answers with tasks/update, and the finished task reports what was deployed. Its durable twin,
 * approve_deployment_durable (a Lambda durable function), must behave the same in every step.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const TASKS = { 'io.modelcontextprotocol/tasks': {} };
/** A client of the Tasks extension that can show the user a form. */
const CAN_ASK = { elicitation: {}, extensions: TASKS };
const CHANGES = ['api: v2.3.1', 'web: v1.9.0', 'db: add index on orders.created_at'];

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

async function startDeployment(tool: string, capabilities: Record<string, unknown> = CAN_ASK, changes = CHANGES): Promise<string> {
  const created = ok(await modernRequest(stack.url, 'tools/call', { name: tool, arguments: { environment: 'staging', changes } }, { capabilities }));
  expect(created.resultType).toBe('task');
  return created.taskId as string;
}

const getTask = (taskId: string, capabilities: Record<string, unknown> = CAN_ASK) => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities });

/** Polls tasks/get until the approval question is open, and returns the task. */
function waitForQuestion(taskId: string) {
  return pollUntilStatus(() => getTask(taskId), ['input_required']);
}

function answer(taskId: string, response: Record<string, unknown>) {
  return modernRequest(stack.url, 'tasks/update', { taskId, inputResponses: { approval: response } }, { capabilities: CAN_ASK });
}

function waitForEnd(taskId: string, capabilities: Record<string, unknown> = CAN_ASK) {
  return pollUntilStatus(() => getTask(taskId, capabilities), ['completed', 'failed', 'cancelled']);
}

describe.each(['approve_deployment', 'approve_deployment_durable'])('%s over the Tasks extension', (tool) => {
  it('the task waits in input_required asking "Deploy 3 changes to staging?"; accepting with a comment deploys every change', async () => {
    const taskId = await startDeployment(tool);
    const waiting = await waitForQuestion(taskId);
    expect(waiting.inputRequests).toEqual({
      approval: {
        method: 'elicitation/create',
        params: {
          message: 'Deploy 3 changes to staging?\n1. api: v2.3.1\n2. web: v1.9.0\n3. db: add index on orders.created_at',
          requestedSchema: {
            type: 'object',
            properties: { comment: { type: 'string', title: 'Comment', description: 'A note for the deployment log (optional).', maxLength: 500 } },
          },
        },
      },
    });
    // The ack is empty: the task's new state is read with the next tasks/get.
    const ack = ok(await answer(taskId, { action: 'accept', content: { comment: 'ship it' } }));
    expect(ack.resultType).toBe('complete');
    expect(Object.keys(ack).filter((field) => ['taskId', 'status', 'result', 'inputRequests'].includes(field))).toEqual([]);
    const done = await waitForEnd(taskId);
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBeFalsy();
    expect(done.result.structuredContent).toEqual({
      environment: 'staging',
      planned: 3,
      deployed: true,
      decision: 'accept',
      comment: 'ship it',
      changes: CHANGES.map((change, i) => ({ step: i + 1, change, status: 'deployed' })),
      summary: 'Deployed 3 changes to staging. Comment: ship it',
    });
  });

  it('declining deploys nothing, and the report says the approver declined', async () => {
    const taskId = await startDeployment(tool, CAN_ASK, ['api: v2.3.1']);
    expect((await waitForQuestion(taskId)).inputRequests.approval.params.message).toBe('Deploy 1 change to staging?\n1. api: v2.3.1');
    ok(await answer(taskId, { action: 'decline' }));
    const done = await waitForEnd(taskId);
    expect(done.status).toBe('completed');
    expect(done.result.structuredContent).toMatchObject({
      deployed: false,
      decision: 'decline',
      changes: [{ step: 1, change: 'api: v2.3.1', status: 'skipped' }],
      summary: 'Deployed nothing to staging: the approver declined.',
    });
  });

  it('a client that cannot show a form is never asked: the task ends as a tool error naming Mcp.CapabilityMissing', async () => {
    const taskId = await startDeployment(tool, { extensions: TASKS });
    const done = await waitForEnd(taskId, { extensions: TASKS });
    // Tasks extension: a tool failure is `completed` with an isError result.
    expect(done.status).toBe('completed');
    expect(done.result.isError).toBe(true);
    expect(JSON.stringify(done.result.content)).toContain('Mcp.CapabilityMissing');
  });
});
