/**
 * Durable function tools against what `cdk deploy` would deploy (the auth=none assembly): the
 * MCP function starts, reads and stops executions through the Lambda IAM gateway under its
 * role; each invocation runs the tool function's bundle in its sandbox, whose SDK checkpoints
 * through the same gateway under the tool's own role; the executions' status changes reach
 * status sync through the template's rule. A tampered copy of the assembly shows the roles are
 * the template's: without its checkpoint grant, the tool's run is refused.
 */
import { randomUUID } from 'node:crypto';
import { GetDurableExecutionCommand, LambdaClient, ListDurableExecutionsByFunctionCommand } from '@aws-sdk/client-lambda';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedFunction, DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { noticeLog } from '../../support/notice-log.ts';
import { legacyNotification, legacyRequest, modernRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../../support/rpc-assertions.ts';
import { copyAssembly, editResource } from '../../support/tampered-assembly.ts';

const TOOL = 'count_primes_durable';

let cdkOut: string;
let stack: DeployedLocalStack;
let logs: string[];
let lambda: LambdaClient;

beforeAll(async () => {
  cdkOut = await deployedAssembly(NO_AUTH);
  ({ stack, logs } = await startAssemblyStack(cdkOut));
  // The durable service's own endpoint, past the gateway: what the test reads is not the functions' calls.
  lambda = new LambdaClient({ region: 'us-east-1', endpoint: stack.durableEndpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
}, 240_000);
afterAll(async () => {
  lambda?.destroy();
  await stack?.close();
});

const toolFunction = (model: DeployedLocalStack['model']): DeployedFunction => {
  const fn = model.functions.find((f) => f.durable && f.name.endsWith(`-${TOOL}`));
  if (!fn) throw new Error(`the assembly has no durable function for ${TOOL}`);
  return fn;
};
const roleOf = (model: DeployedLocalStack['model'], logicalIdPart: string) => {
  const fn = model.functions.find((f) => f.logicalId.includes(logicalIdPart));
  if (!fn) throw new Error(`no function ${logicalIdPart} in the assembly`);
  return fn.roleArn;
};
const call = (url: URL, args: Record<string, unknown>, token: string) =>
  legacyRequest(url, 'tools/call', { name: TOOL, arguments: args, operation: { token } });
const status = (url: URL, token: string) => legacyRequest(url, 'tools/async/status', { token });
const decided = (allowed: boolean, roleArn: string, action: string) =>
  stack.authority.decisions().filter((d) => d.allowed === allowed && d.roleArn === roleArn && d.action === action);

describe('a durable tool as deployed', () => {
  it('reads the durable functions, their live alias and the durable status rule from the assembly', () => {
    const fn = toolFunction(stack.model);
    expect(fn.durable).toEqual({ executionTimeoutSeconds: 900, retentionDays: 1 });
    const alias = stack.model.aliases.find((a) => a.functionLogicalId === fn.logicalId);
    expect(alias).toMatchObject({ name: 'live', arn: `${fn.arn}:live` });
    // The alias names the function's published version, which the assembly holds too.
    expect(stack.model.versions.map((v) => v.arn)).toContain(`${fn.arn}:${alias?.functionVersion}`);
    const rule = stack.model.rules.find((r) => r.durableStatusChanges);
    expect(rule?.targets.map((t) => t.functionArn)).toEqual([stack.model.functions.find((f) => f.logicalId.includes('StatusSync'))?.arn]);
  });

  it('starts count_primes_durable with a token, polls it to completed and reads the result its bundle computed', async () => {
    const token = `tok-${randomUUID()}`;
    const started = ok(await call(stack.url, { below: 1000, chunks: 4, pauseSeconds: 1 }, token));
    expect(started.operation.status).toMatch(/submitted|working/);
    const done = await pollUntilStatus(() => status(stack.url, token), ['completed', 'failed'], { interval: 200, timeout: 60_000 });
    expect(done.status).toBe('completed');
    const { result } = ok(await legacyRequest(stack.url, 'tools/async/result', { token }));
    expect(result.structuredContent).toMatchObject({ below: 1000, primes: 168, largest: 997 });

    const fn = toolFunction(stack.model);
    const [execution] =
      (await lambda.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: fn.name, Statuses: ['SUCCEEDED'] }))).DurableExecutions ?? [];
    expect(execution?.DurableExecutionArn).toMatch(new RegExp(`^${fn.arn.replaceAll('$', '\\$')}:\\$LATEST/durable-execution/`));
    // The MCP function started it through the alias, under its role; the bundle checkpointed under the tool's.
    const mcpRole = roleOf(stack.model, 'ServerMcpFunction');
    expect(decided(true, mcpRole, 'lambda:InvokeFunction').map((d) => d.resource)).toContain(`${fn.arn}:live`);
    expect(decided(true, fn.roleArn, 'lambda:CheckpointDurableExecution').length).toBeGreaterThan(0);
    expect(logs.some((line) => line.startsWith(`[${fn.logicalId}] START RequestId:`))).toBe(true);
    // Its end reached status sync through the durable rule, which read the execution under its own role.
    await stack.drainEvents();
    expect(decided(true, roleOf(stack.model, 'StatusSyncHandler'), 'lambda:GetDurableExecution').length).toBeGreaterThan(0);
    expect(await Promise.all(stack.deadLetterQueues.map((queue) => queue.list()))).toEqual(stack.deadLetterQueues.map(() => []));
  });

  it('notifications/cancelled stops the durable execution; the operation reads canceled', async () => {
    const token = `tok-${randomUUID()}`;
    ok(await call(stack.url, { below: 1000, pauseSeconds: 60 }, token));
    await pollUntilStatus(() => status(stack.url, token), ['working'], { timeout: 30_000 });
    const cancel = await legacyNotification(stack.url, 'notifications/cancelled', { requestId: 1, _operation: { token } });
    expect(cancel.status).toBe(202);
    await pollUntilStatus(() => status(stack.url, token), ['canceled'], { timeout: 30_000 });
    const fn = toolFunction(stack.model);
    const stopped = (await lambda.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: fn.name, Statuses: ['STOPPED'] }))).DurableExecutions ?? [];
    expect(stopped).toHaveLength(1);
    const described = await lambda.send(new GetDurableExecutionCommand({ DurableExecutionArn: stopped[0]?.DurableExecutionArn }));
    expect(described.Status).toBe('STOPPED');
    expect(decided(true, roleOf(stack.model, 'ServerMcpFunction'), 'lambda:StopDurableExecution').length).toBeGreaterThan(0);
  });
});

describe('a durable tool that asks a question, as deployed', () => {
  const CAN_ASK = { elicitation: {}, extensions: { 'io.modelcontextprotocol/tasks': {} } };

  it('approve_deployment_durable asks mid-run; tasks/update answers the callback under the MCP role; it completes with the comment', async () => {
    const changes = ['api: v2.3.1', 'web: v1.9.0'];
    const created = ok(
      await modernRequest(
        stack.url,
        'tools/call',
        { name: 'approve_deployment_durable', arguments: { environment: 'staging', changes } },
        { capabilities: CAN_ASK },
      ),
    );
    const taskId = created.taskId as string;
    const get = () => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: CAN_ASK });
    const waiting = await pollUntilStatus(get, ['input_required'], { timeout: 60_000 });
    expect(waiting.inputRequests.approval.method).toBe('elicitation/create');
    ok(
      await modernRequest(
        stack.url,
        'tasks/update',
        { taskId, inputResponses: { approval: { action: 'accept', content: { comment: 'ship it' } } } },
        { capabilities: CAN_ASK },
      ),
    );
    const done = await pollUntilStatus(get, ['completed', 'failed', 'cancelled'], { timeout: 60_000 });
    expect(done.status).toBe('completed');
    expect(done.result.structuredContent).toMatchObject({ environment: 'staging', planned: 2, deployed: true, comment: 'ship it' });
    // The callback id names no execution: the gateway found the one that issued it and authorized the answer on it.
    const answered = decided(true, roleOf(stack.model, 'ServerMcpFunction'), 'lambda:SendDurableExecutionCallbackSuccess');
    expect(answered.map((d) => d.resource)).toEqual([expect.stringMatching(/-approve_deployment_durable:\$LATEST\/durable-execution\/[^/]+\/[^/]+$/)]);
  });
});

describe('a durable tool whose role lacks the checkpoint grant (a tampered assembly)', () => {
  it("refuses the bundle's checkpoints under the tool's role, and the tool call fails", async () => {
    const copy = await copyAssembly(cdkOut);
    let tampered: DeployedLocalStack | undefined;
    try {
      await editResource(
        copy.dir,
        (id, r) => r.Type === 'AWS::IAM::Policy' && id.startsWith('countprimesdurableHandlerRoleDefaultPolicy'),
        (policy) => {
          const document = policy.Properties?.PolicyDocument;
          if (!document) throw new Error('the policy has no document');
          const before = document.Statement.length;
          document.Statement = document.Statement.filter((s) => !JSON.stringify(s).includes('lambda:CheckpointDurableExecution'));
          if (document.Statement.length !== before - 1) throw new Error('expected one statement granting the checkpoints');
        },
      );
      const notices = noticeLog();
      ({ stack: tampered } = await startAssemblyStack(copy.dir, { notices }));
      const token = `tok-${randomUUID()}`;
      ok(await call(tampered.url, { below: 100, pauseSeconds: 0 }, token));
      const done = await pollUntilStatus(() => status(tampered?.url ?? stack.url, token), ['completed', 'failed'], { interval: 200, timeout: 60_000 });
      expect(done.status).toBe('failed');
      const fn = toolFunction(tampered.model);
      const refused = tampered.authority.decisions().filter((d) => !d.allowed && d.roleArn === fn.roleArn && d.action === 'lambda:CheckpointDurableExecution');
      expect(refused.map((d) => d.resource)).toEqual([expect.stringMatching(new RegExp(`^${fn.arn.replaceAll('$', '\\$')}:\\$LATEST/durable-execution/`))]);
      // Status sync settles the failed end before the stack stops, rather than dead-lettering it as the stack closes.
      await tampered.drainEvents();
      // The Lambda gateway said so as it refused them.
      expect(notices.lines).toContainEqual(expect.stringMatching(/^WARN IAM gateway \(lambda\): AccessDenied: .*lambda:CheckpointDurableExecution/));
    } finally {
      await tampered?.close();
      await copy.remove();
    }
  }, 240_000);
});
