/**
 * Every dialect's start, poll, result and cancel, input mid-run, progress and a large result
 * through the bucket, against what `cdk deploy` would deploy (the auth=none assembly): the MCP
 * function's bundle behind its Function URL, the workers' bundles, the resolved definitions,
 * and every AWS call through the IAM gateways under the template's roles.
 */
import { randomUUID } from 'node:crypto';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ListExecutionsCommand, SFNClient } from '@aws-sdk/client-sfn';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { datasetCsv } from '../../../lambdas/examples/dataset-csv.ts';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { expectedStats } from '../../support/expected-stats.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';

const TASKS = { 'io.modelcontextprotocol/tasks': {} };
const CAN_ASK = { elicitation: {}, extensions: TASKS };
/** A run that waits this long (scaled by the test stack's waitTimeScale 0.01: about 30 s) is still running when cancelled. */
const LONG_DELAY_SECONDS = 3000;

let stack: DeployedLocalStack;
let logs: string[];
let sfn: SFNClient;

beforeAll(async () => {
  ({ stack, logs } = await startAssemblyStack(await deployedAssembly(NO_AUTH)));
  sfn = new SFNClient({ region: 'us-east-1', endpoint: stack.sfnEndpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
}, 240_000);
afterAll(async () => {
  sfn?.destroy();
  await stack?.close();
});

describe('SEP-1391 against the assembly', () => {
  const call = (name: string, args: Record<string, unknown>, token: string) =>
    legacyRequest(stack.url, 'tools/call', { name, arguments: args, operation: { token } });
  const status = (token: string) => legacyRequest(stack.url, 'tools/async/status', { token });

  it('starts analyze_dataset with a token, polls tools/async/status to completed, reads tools/async/result', async () => {
    const token = `tok-${randomUUID()}`;
    const started = ok(await call('analyze_dataset', { rows: 120_000, seed: 5 }, token));
    expect(started.operation.status).toMatch(/submitted|working/);
    const done = await pollUntilStatus(() => status(token), ['completed', 'failed'], { interval: 200, timeout: 60_000 });
    expect(done.status).toBe('completed');
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.structuredContent.count).toBe(expectedStats(120_000, 5).count);
    expect(result.structuredContent.mean).toBeCloseTo(expectedStats(120_000, 5).mean, 9);
  });

  it('notifications/cancelled with _operation.token stops the execution; the operation reads canceled', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await call('analyze_dataset', { rows: 10, delaySeconds: LONG_DELAY_SECONDS }, token));
    await pollUntilStatus(() => status(token), ['working']);
    const cancel = await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 1, _operation: { token } });
    expect(cancel.status).toBe(202);
    await pollUntilStatus(() => status(token), ['canceled'], { timeout: 30_000 });
  });
});

describe('2025-11-25 tasks against the assembly, with the v1 SDK Client', () => {
  async function v1Client(): Promise<LegacyClient> {
    const client = new LegacyClient({ name: 'as-deployed-legacy', version: '1.0.0' });
    await client.connect(new LegacyTransport(stack.url));
    await client.listTools();
    return client;
  }

  it('callToolStream: taskCreated, then the result of analyze_dataset', async () => {
    const client = await v1Client();
    try {
      const stream = client.experimental.tasks.callToolStream({ name: 'analyze_dataset', arguments: { rows: 100_001, seed: 9 } }, undefined, {
        task: { ttl: 600_000 },
      });
      const kinds: string[] = [];
      let structured: Record<string, number> | undefined;
      for await (const message of stream) {
        kinds.push(message.type);
        if (message.type === 'result') structured = message.result.structuredContent as Record<string, number>;
        if (message.type === 'error') throw message.error;
      }
      expect(kinds[0]).toBe('taskCreated');
      expect(kinds.at(-1)).toBe('result');
      expect(structured?.count).toBe(100_001);
    } finally {
      await client.close();
    }
  });

  it('tasks/cancel stops a running task: cancelled, and its execution ABORTED', async () => {
    const created = ok(
      await legacyRequest(stack.url, 'tools/call', {
        name: 'analyze_dataset',
        arguments: { rows: 10, delaySeconds: LONG_DELAY_SECONDS },
        task: { ttl: 600_000 },
      }),
    );
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['working']);
    const cancelled = ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId }));
    expect(cancelled.status).toBe('cancelled');
    // The task's execution stopped: the analyze_dataset machine has an ABORTED execution.
    const machine = stack.model.stateMachines.find((m) => m.name.endsWith('analyze_dataset'))!;
    const aborted = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine.arn, statusFilter: 'ABORTED' }));
    expect(aborted.executions?.length).toBeGreaterThan(0);
  });
});

describe('the Tasks extension (2026-07-28) against the assembly', () => {
  it('approve_deployment asks mid-run; tasks/update answers; the deployment completes with the comment', async () => {
    const changes = ['api: v2.3.1', 'web: v1.9.0'];
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'approve_deployment', arguments: { environment: 'staging', changes } }, { capabilities: CAN_ASK }),
    );
    expect(created.resultType).toBe('task');
    const taskId = created.taskId as string;
    const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: CAN_ASK });
    const waiting = await pollUntilStatus(get, ['input_required'], { timeout: 30_000 });
    expect(waiting.inputRequests.approval.method).toBe('elicitation/create');
    ok(
      await modernRequest(
        stack.url,
        'tasks/update',
        { taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'ship it' } } } },
        { capabilities: CAN_ASK },
      ),
    );
    const done = await pollUntilStatus(get, ['completed', 'failed', 'cancelled'], { timeout: 30_000 });
    expect(done.status).toBe('completed');
    expect(done.result.structuredContent).toMatchObject({ environment: 'staging', planned: 2, deployed: true, comment: 'ship it' });
  });

  it('tasks/cancel stops a running task', async () => {
    const created = ok(
      await modernRequest(
        stack.url,
        'tools/call',
        { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: LONG_DELAY_SECONDS } },
        { capabilities: { extensions: TASKS } },
      ),
    );
    const taskId = created.taskId as string;
    const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: { extensions: TASKS } });
    await pollUntilStatus(get, ['working']);
    ok(await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: { extensions: TASKS } }));
    await pollUntilStatus(get, ['cancelled'], { timeout: 30_000 });
  });
});

describe('progress and large results against the assembly', () => {
  it("a synchronous run_test_suite reports its progress to the v1 Client's onprogress, through the report_progress worker's bundle", async () => {
    const client = new LegacyClient({ name: 'as-deployed-progress', version: '1.0.0' });
    // A client of a revision before tasks: run_test_suite (invocation both) runs synchronously.
    await client.connect(new LegacyTransport(stack.url));
    try {
      const progress: unknown[] = [];
      const result = await client.callTool({ name: 'run_test_suite', arguments: { suite: 'unit', tests: 12, failures: 2, durationSeconds: 1 } }, undefined, {
        onprogress: (p) => progress.push(p),
        timeout: 60_000,
      });
      expect(result.structuredContent).toMatchObject({ suite: 'unit', passed: 10, failed: 2 });
      expect(progress.length).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });

  it("export_dataset's 100,000-row CSV comes back whole through resources/read, from the template's bucket", async () => {
    const created = ok(await legacyRequest(stack.url, 'tools/call', { name: 'export_dataset', arguments: { rows: 100_000, seed: 7 }, task: { ttl: 600_000 } }));
    const taskId = created.task.taskId as string;
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId }), ['completed'], { timeout: 60_000 });
    const result = ok(await legacyRequest(stack.url, 'tasks/result', { taskId }));
    const link = result.content[0];
    expect(link).toMatchObject({ type: 'resource_link', mimeType: 'text/csv' });
    const read = ok(await legacyRequest(stack.url, 'resources/read', { uri: link.uri }));
    expect(read.contents[0].text).toBe(datasetCsv(100_000, 7));
  });

  it('no call any role made over these flows was refused', () => {
    expect(stack.authority.decisions().filter((d) => !d.allowed)).toEqual([]);
  });
});

describe('a client with no async dialect against the assembly (handle tools, on by default)', () => {
  const OLD = { version: '2025-06-18' };

  it('sees the async-only tools beside the handle tools', async () => {
    const { tools } = ok(await legacyRequest(stack.url, 'tools/list', {}, OLD));
    const names = (tools as Array<{ name: string }>).map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['analyze_dataset', 'operation_result', 'operation_status', 'operation_cancel', 'operation_list']));
  });

  it('a call of analyze_dataset that finishes within its bound answers with the result itself, and operation_list names it', async () => {
    const result = ok(await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 50_000, seed: 4 } }, OLD));
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent.count).toBe(50_000);
    const listed = ok(await legacyRequest(stack.url, 'tools/call', { name: 'operation_list', arguments: {} }, OLD));
    expect((listed.structuredContent.operations as Array<{ tool: string }>).some((op) => op.tool === 'analyze_dataset')).toBe(true);
  });
});

describe("the polls' reads as deployed", () => {
  // The MCP function signs a poll's GetItem itself, from the Lambda environment (lambda-environment-wire.ts);
  // a read the gateway refused would still be answered by the SDK path, so only the function's warning
  // on giving the wire up (three refusals in a row, or a signer module its asset lacks) shows it.
  // Every flow above polled many times.
  it("go over the Lambda environment's wire, which the IAM gateway accepts: the function never gives it up", () => {
    const mcpLines = logs.filter((line) => line.startsWith('[ServerMcpFunction'));
    expect(mcpLines.length).toBeGreaterThan(0);
    expect(mcpLines.filter((line) => line.includes('hot GetItem wire given up'))).toEqual([]);
  });
});
