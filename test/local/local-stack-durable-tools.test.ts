/**
 * A durable tool on the local stack: its handler runs on the local durable service through the
 * unmodified LambdaClient, its status-change events reach status sync by the rule's pattern, and
 * a call, a task, a failure, a cancel and a restart with --data end as they do for a state machine.
 */
import { cp, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { GetDurableExecutionCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { type LocalStack, startLocalStack } from '../../local/local-stack.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const FIXTURES = resolve(import.meta.dirname, '../fixtures/durable-tools');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ toolsDir: FIXTURES, port: 0 });
});
afterAll(async () => {
  await stack?.close();
});

async function startTask(stackUrl: URL, args: Record<string, unknown>): Promise<string> {
  const { task } = ok(await legacyRequest(stackUrl, 'tools/call', { name: 'wait_and_sum', arguments: args, task: {} }));
  return task.taskId as string;
}

const settled = (url: URL, taskId: string) =>
  pollUntilStatus(() => legacyRequest(url, 'tasks/get', { taskId }), ['completed', 'failed', 'cancelled'], { timeout: 20_000 });

describe('a durable tool on the local stack', () => {
  it('is listed with its function ARN and the run bound its tool.json gives', () => {
    const tool = stack.catalog.tools.find((t) => t.name === 'wait_and_sum');
    expect(tool?.stateMachineArn).toMatch(/^arn:aws:lambda:us-east-1:\d{12}:function:wait_and_sum:/);
    expect(tool?.timing.maxRunSeconds).toBe(3600);
    expect(stack.durableEndpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('answers a synchronous call with the structured result its handler returned', async () => {
    const result = ok(await legacyRequest(stack.url, 'tools/call', { name: 'wait_and_sum', arguments: { numbers: [1, 2, 3] } }));
    expect(result).toMatchObject({ structuredContent: { sum: 6, count: 3 }, content: [{ type: 'text', text: 'The sum is 6.' }] });
  });

  it('a task waits for real, ends by its status event, and its result is the handler result', async () => {
    const taskId = await startTask(stack.url, { numbers: [4, 5], waitSeconds: 1 });
    expect((await settled(stack.url, taskId)).status).toBe('completed');
    expect(ok(await legacyRequest(stack.url, 'tasks/result', { taskId }))).toMatchObject({ structuredContent: { sum: 9, count: 2 } });
  });

  it('a handler that throws is a tool error naming the error', async () => {
    const taskId = await startTask(stack.url, { numbers: [1], fail: true });
    expect((await settled(stack.url, taskId)).status).toBe('failed');
    const result = ok(await legacyRequest(stack.url, 'tasks/result', { taskId }));
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result.content)).toContain('SumFailed');
  });

  it('an error named Mcp.ProtocolError with a JSON message answers with that JSON-RPC error, as a Fail state does', async () => {
    const taskId = await startTask(stack.url, { numbers: [1], protocolError: true });
    expect((await settled(stack.url, taskId)).status).toBe('failed');
    const response = await legacyRequest(stack.url, 'tasks/result', { taskId });
    expect(response.message?.error).toEqual({ code: -32602, message: 'Invalid arguments: numbers must add up' });
  });

  it('cancelling a task stops its durable execution', async () => {
    const taskId = await startTask(stack.url, { numbers: [1], waitSeconds: 600 });
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }));
    expect(ok(await legacyRequest(stack.url, 'tasks/get', { taskId })).status).toBe('cancelled');
    const operation = await stack.app.operations.readLive({ ownerId: ownerIdFor('local'), token: taskId });
    const arn = operation.executionArn ?? '';
    await expect
      .poll(async () => {
        const execution = await stack.awsClients.lambda?.send(new GetDurableExecutionCommand({ DurableExecutionArn: await resolvedArn(arn) }));
        return execution?.Status;
      })
      .toBe('STOPPED');
  });
});

/** The core may hold the engine's by-name ARN; the API wants the one Lambda assigned. */
async function resolvedArn(arn: string): Promise<string> {
  if (!arn.endsWith('/by-name')) return arn;
  const { ListDurableExecutionsByFunctionCommand } = await import('@aws-sdk/client-lambda');
  const [functionArn = '', rest = ''] = arn.split('/durable-execution/');
  const name = rest.split('/')[0];
  const listed = await stack.awsClients.lambda?.send(
    new ListDurableExecutionsByFunctionCommand({ FunctionName: functionArn.replace(/:[^:]+$/, ''), DurableExecutionName: name }),
  );
  return listed?.DurableExecutions?.[0]?.DurableExecutionArn ?? arn;
}

describe('durable tools across a restart', () => {
  it('with --data, a task started before a restart completes after it, its wait kept', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'async-mcp-durable-restart-'));
    try {
      const first = await startLocalStack({ toolsDir: FIXTURES, port: 0, dataDir });
      let taskId: string;
      try {
        taskId = await startTask(first.url, { numbers: [2, 3], waitSeconds: 3 });
      } finally {
        await first.close();
      }
      const second = await startLocalStack({ toolsDir: FIXTURES, port: 0, dataDir });
      try {
        expect((await settled(second.url, taskId)).status).toBe('completed');
        expect(ok(await legacyRequest(second.url, 'tasks/result', { taskId }))).toMatchObject({ structuredContent: { sum: 5, count: 2 } });
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a durable question across a restart', () => {
  it('with --data, a question asked before a restart is answered after it, and the callback resumes the run', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'async-mcp-durable-question-'));
    const EXT = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };
    const args = { environment: 'staging', changes: ['api: v9'] };
    try {
      const first = await startLocalStack({ toolsDir: 'state-machines', port: 0, dataDir });
      let taskId: string;
      try {
        taskId = ok(await modernRequest(first.url, 'tools/call', { name: 'approve_deployment_durable', arguments: args }, { capabilities: EXT })).taskId;
        await pollUntilStatus(() => modernRequest(first.url, 'tasks/get', { taskId }, { capabilities: EXT }), ['input_required'], { timeout: 15_000 });
      } finally {
        await first.close();
      }
      const second = await startLocalStack({ toolsDir: 'state-machines', port: 0, dataDir });
      try {
        const update = { taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'after the restart' } } } };
        ok(await modernRequest(second.url, 'tasks/update', update, { capabilities: EXT }));
        const done = await pollUntilStatus(() => modernRequest(second.url, 'tasks/get', { taskId }, { capabilities: EXT }), ['completed', 'failed'], {
          timeout: 15_000,
        });
        expect(done.result.structuredContent).toMatchObject({ deployed: true, decision: 'accept', comment: 'after the restart' });
      } finally {
        await second.close();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe('a broken durable tool stops startup', () => {
  it('naming its durable.ts when it exports no handler', async () => {
    const toolsDir = await mkdtemp(join(tmpdir(), 'async-mcp-durable-broken-'));
    try {
      await cp(join(FIXTURES, 'wait_and_sum'), join(toolsDir, 'wait_and_sum'), { recursive: true });
      await writeFile(join(toolsDir, 'wait_and_sum', 'durable.ts'), 'export const handle = () => 1;\n');
      await expect(startLocalStack({ toolsDir, port: 0 })).rejects.toThrow(/wait_and_sum[/\\]durable\.ts.*handler/);
    } finally {
      await rm(toolsDir, { recursive: true, force: true });
    }
  });
});
