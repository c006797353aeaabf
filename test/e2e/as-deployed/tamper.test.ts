/**
 * Each part of the deployed stack is read from the cloud assembly, not from the source folders:
 * a copy of the auth=none assembly with one thing changed (a role's statement, a function's
 * environment variable, a machine's DefinitionString, a bundled asset) runs with that change.
 */
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { type NoticeLog, noticeLog } from '../../support/notice-log.ts';
import { legacyRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';
import { assetDirOf, copyAssembly, editResource, type TemplateResource } from '../../support/tampered-assembly.ts';

/** A run that waits this long (scaled by the test stack's waitTimeScale 0.01: about 30 s) is still running later. */
const LONG_DELAY_SECONDS = 3000;

let source: string;
const cleanups: Array<() => Promise<void>> = [];

beforeAll(async () => {
  source = await deployedAssembly(NO_AUTH);
}, 240_000);
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Copies the assembly, lets `tamper` change it, and starts the copy. */
async function startTampered(tamper: (dir: string) => Promise<unknown>): Promise<{ stack: DeployedLocalStack; logs: string[]; notices: NoticeLog }> {
  const copy = await copyAssembly(source);
  cleanups.push(() => copy.remove());
  await tamper(copy.dir);
  // The stack's own notices (a gateway's refusals) are the test's to assert, not the run's output.
  const notices = noticeLog();
  const started = await startAssemblyStack(copy.dir, { notices });
  cleanups.push(() => started.stack.close());
  return { ...started, notices };
}

const isMcpFunction = (id: string, r: TemplateResource) => r.Type === 'AWS::Lambda::Function' && id.startsWith('ServerMcpFunction');
const isQuickCalculationMachine = (_: string, r: TemplateResource) =>
  r.Type === 'AWS::StepFunctions::StateMachine' && String(r.Properties?.StateMachineName).endsWith('-quick_calculation');
const statements = (policy: TemplateResource) => policy.Properties!.PolicyDocument!.Statement as Array<{ Action: string | string[] }>;
const actionsOf = (statement: { Action: string | string[] }) => [statement.Action].flat();

/** Removes, from the one AWS::IAM::Policy whose logical id starts with `policyPrefix`, the statement granting `action`. */
async function removeStatement(dir: string, policyPrefix: string, action: string): Promise<void> {
  await editResource(
    dir,
    (id, r) => r.Type === 'AWS::IAM::Policy' && id.startsWith(policyPrefix),
    (policy) => {
      const before = statements(policy);
      const after = before.filter((s) => !actionsOf(s).includes(action));
      expect(after.length).toBe(before.length - 1);
      policy.Properties!.PolicyDocument!.Statement = after;
    },
  );
}

async function v1Client(stack: DeployedLocalStack): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'as-deployed-tamper', version: '1.0.0' });
  await client.connect(new LegacyTransport(stack.url));
  cleanups.push(() => client.close());
  return client;
}

describe('a role policy is read from the assembly', () => {
  it("without the MCP role's states:StartExecution statement, starting a task fails: the client gets the deployed server's internal error, the function's log the AccessDeniedException naming the action", async () => {
    const { stack, logs, notices } = await startTampered((dir) => removeStatement(dir, 'ServerMcpRoleDefaultPolicy', 'states:StartExecution'));
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 }, task: { ttl: 600_000 } });
    // As a deployed server answers: an internal error that names no AWS detail.
    expect(response.message?.error).toMatchObject({ code: -32603, message: 'The workflow engine did not start the execution' });
    // The refusal came from the gateway enforcing the template's role, and the function logged it.
    const denied = stack.authority.decisions().filter((d) => !d.allowed);
    expect(denied.map((d) => d.action)).toContain('states:StartExecution');
    const mcp = stack.model.functionUrl!.targetFunctionLogicalId;
    expect(logs.some((line) => line.startsWith(`[${mcp}]`) && line.includes('AccessDeniedException') && line.includes('states:StartExecution'))).toBe(true);
    expect(notices.lines).toContainEqual(expect.stringMatching(/^WARN IAM gateway \(states\): AccessDenied: .*states:StartExecution/));
  }, 120_000);

  it("without quick_calculation's machine role lambda:InvokeFunction statement, its worker call fails as AWS fails it: a tool error naming lambda:InvokeFunction", async () => {
    const { stack } = await startTampered((dir) => removeStatement(dir, 'quickcalculationStateMachineRoleDefaultPolicy', 'lambda:InvokeFunction'));
    const client = await v1Client(stack);
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } });
    expect(result.isError).toBe(true);
    expect(JSON.stringify(result)).toContain('lambda:InvokeFunction');
    const denied = stack.authority.decisions().filter((d) => !d.allowed);
    expect(denied).toEqual([expect.objectContaining({ action: 'lambda:InvokeFunction' })]);
  }, 120_000);
});

describe("a function's environment is read from the assembly", () => {
  it('ASYNC_MCP_MAX_ACTIVE_OPERATIONS set to 1: a second start while one runs is refused with 429', async () => {
    const { stack } = await startTampered((dir) =>
      editResource(dir, isMcpFunction, (fn) => {
        fn.Properties!.Environment!.Variables.ASYNC_MCP_MAX_ACTIVE_OPERATIONS = '1';
      }),
    );
    const start = () =>
      legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10, delaySeconds: LONG_DELAY_SECONDS }, task: { ttl: 600_000 } });
    const first = ok(await start());
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId: first.task.taskId }), ['working']);
    const second = await start();
    expect(second.status).toBe(429);
    expect(second.message?.error).toBeDefined();
    ok(await legacyRequest(stack.url, 'tasks/cancel', { taskId: first.task.taskId }));
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId: first.task.taskId }), ['cancelled']);
    await stack.drainEvents();
  }, 120_000);

  it('MAX_KEEPALIVE_SECONDS set to 120: a task asking for a 600 s ttl is granted 120 s', async () => {
    const { stack } = await startTampered((dir) =>
      editResource(dir, isMcpFunction, (fn) => {
        fn.Properties!.Environment!.Variables.MAX_KEEPALIVE_SECONDS = '120';
      }),
    );
    const created = ok(await legacyRequest(stack.url, 'tools/call', { name: 'summarize_numbers', arguments: { numbers: [1, 2] }, task: { ttl: 600_000 } }));
    expect(created.task.ttl).toBe(120_000);
    await pollUntilStatus(() => legacyRequest(stack.url, 'tasks/get', { taskId: created.task.taskId }), ['completed']);
    await stack.drainEvents();
  }, 120_000);
});

describe("a state machine's DefinitionString is read from the assembly", () => {
  it("quick_calculation's machine changed to a Pass state answers the Pass state's result, and its worker never runs", async () => {
    const { stack, logs } = await startTampered((dir) =>
      editResource(dir, isQuickCalculationMachine, (machine) => {
        machine.Properties!.DefinitionString = JSON.stringify({
          StartAt: 'Calculate',
          States: { Calculate: { Type: 'Pass', Result: { result: -4242 }, End: true } },
        });
      }),
    );
    const client = await v1Client(stack);
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ result: -4242 });
    const worker = stack.model.functions.find((f) => f.logicalId.startsWith('WorkerscalculateFunction'))!;
    expect(logs.some((line) => line.startsWith(`[${worker.logicalId}]`))).toBe(false);
  }, 120_000);
});

describe('a bundled asset is read from the assembly', () => {
  it("a line appended to the calculate worker's index.mjs runs at its module scope, and the worker still computes", async () => {
    const { stack, logs } = await startTampered(async (dir) => {
      const asset = await assetDirOf(dir, (id) => id.startsWith('WorkerscalculateFunction'));
      await appendFile(join(asset, 'index.mjs'), '\nconsole.log("tampered: appended to the bundled asset");\n');
    });
    const client = await v1Client(stack);
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } });
    expect(result.structuredContent).toEqual({ result: 42 });
    const worker = stack.model.functions.find((f) => f.logicalId.startsWith('WorkerscalculateFunction'))!;
    expect(logs.some((line) => line.startsWith(`[${worker.logicalId}]`) && line.includes('tampered: appended to the bundled asset'))).toBe(true);
  }, 120_000);
});
