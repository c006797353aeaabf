import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
import {
  GetDurableExecutionCommand,
  InvokeCommand,
  LambdaClient,
  ListDurableExecutionsByFunctionCommand,
  SendDurableExecutionCallbackSuccessCommand,
  StopDurableExecutionCommand,
} from '@aws-sdk/client-lambda';
import { describe, expect, it } from 'vitest';
import { startLocalDurableService } from '../../../local/durable/index.ts';
import { ACCOUNT, REGION, role, useGatewayHarness } from './gateway-harness.ts';

const FUNCTION = `arn:aws:lambda:${REGION}:${ACCOUNT}:function:AsyncMcp-approve_durable`;
const ALIAS = `${FUNCTION}:live`;

// Shaped like the MCP role's durable grants: invoke through the alias, the executions of every
// version (`:*`, as the durable executions' ARNs carry the version), and list on the function.
const MCP = role('AsyncMcp-ServerMcpRole-DURABLE', [
  { Action: 'lambda:InvokeFunction', Effect: 'Allow', Resource: ALIAS },
  { Action: 'lambda:ListDurableExecutionsByFunction', Effect: 'Allow', Resource: FUNCTION },
  {
    Action: ['lambda:GetDurableExecution', 'lambda:StopDurableExecution', 'lambda:SendDurableExecutionCallbackSuccess'],
    Effect: 'Allow',
    Resource: `${FUNCTION}:*`,
  },
]);
// Grants the unqualified function only: an execution's ARN never matches it.
const UNQUALIFIED = role('AsyncMcp-ReaderRole-UNQUALIFIED', [
  { Action: ['lambda:InvokeFunction', 'lambda:GetDurableExecution', 'lambda:SendDurableExecutionCallbackSuccess'], Effect: 'Allow', Resource: FUNCTION },
]);

describe('the IAM gateway in front of the local durable service, driven by the real LambdaClient', () => {
  const harness = useGatewayHarness();

  async function setUp() {
    const callbackIds: string[] = [];
    const approve = withDurableExecution(async (_event: unknown, context: DurableContext) => {
      const answer = await context.waitForCallback<string>('approval', async (callbackId) => void callbackIds.push(callbackId));
      return { answer };
    });
    const durable = harness.closeLater(await startLocalDurableService({ functions: { 'AsyncMcp-approve_durable': approve } }));
    const authority = harness.authority([MCP, UNQUALIFIED]);
    const gateway = await harness.gateway({
      service: 'lambda',
      upstream: durable.endpoint,
      authority,
      resolve: {
        // What the deployed stack gives it: the execution whose state holds the callback.
        durableExecutionOfCallback: async (callbackId) => {
          for (const execution of durable.service.list('AsyncMcp-approve_durable', {})) {
            const state = await durable.service.state(execution.DurableExecutionArn);
            if (state.Operations.some((operation) => operation.CallbackDetails?.CallbackId === callbackId)) return execution.DurableExecutionArn;
          }
          return undefined;
        },
      },
    });
    const clientAs = (roleArn: string, session: string, credentials = authority.credentialsFor(roleArn, session)) => {
      const client = new LambdaClient({ region: REGION, endpoint: gateway.endpoint, credentials, maxAttempts: 1 });
      harness.closeLater({ close: () => client.destroy() });
      return client;
    };
    const mcp = clientAs(MCP.arn, 'mcp');
    const start = async (name: string) => {
      const out = await mcp.send(
        new InvokeCommand({ FunctionName: ALIAS, InvocationType: 'Event', DurableExecutionName: name, Payload: new TextEncoder().encode('{}') }),
      );
      if (!out.DurableExecutionArn) throw new Error('Invoke gave no DurableExecutionArn');
      return out.DurableExecutionArn;
    };
    const callbackOf = async () => {
      for (let i = 0; i < 200 && callbackIds.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      const [id] = callbackIds.splice(0, 1);
      if (!id) throw new Error('the execution asked no question');
      return id;
    };
    return { authority, mcp, clientAs, start, callbackOf };
  }

  it('lets a role with the durable grants start through the alias, read, list, answer and stop executions', async () => {
    const { mcp, start, callbackOf } = await setUp();
    const arn = await start('op-answered');
    expect(arn).toMatch(/^arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-approve_durable:\$LATEST\/durable-execution\/op-answered\//);
    await mcp.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: await callbackOf(), Result: new TextEncoder().encode('yes') }));
    let execution = await mcp.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    for (let i = 0; i < 200 && execution.Status === 'RUNNING'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 10));
      execution = await mcp.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }));
    }
    expect(execution.Status).toBe('SUCCEEDED');
    expect(JSON.parse(execution.Result ?? 'null')).toEqual({ answer: 'yes' });

    const listed = await mcp.send(new ListDurableExecutionsByFunctionCommand({ FunctionName: FUNCTION, DurableExecutionName: 'op-answered' }));
    expect(listed.DurableExecutions?.map((e) => e.DurableExecutionArn)).toEqual([arn]);

    const waiting = await start('op-stopped');
    await callbackOf();
    await mcp.send(new StopDurableExecutionCommand({ DurableExecutionArn: waiting }));
    expect((await mcp.send(new GetDurableExecutionCommand({ DurableExecutionArn: waiting }))).Status).toBe('STOPPED');
  });

  it('refuses a durable call whose grant names the unqualified function, naming the execution ARN it authorized', async () => {
    const { clientAs, start, callbackOf } = await setUp();
    const arn = await start('op-unqualified');
    const callbackId = await callbackOf();
    const reader = clientAs(UNQUALIFIED.arn, 'reader');
    const denied = (action: string, resource: string) =>
      expect.objectContaining({
        name: 'AccessDeniedException',
        $metadata: expect.objectContaining({ httpStatusCode: 403 }),
        message: `User: arn:aws:sts::${ACCOUNT}:assumed-role/${UNQUALIFIED.name}/reader is not authorized to perform: ${action} on resource: ${resource} because no identity-based policy allows the ${action} action`,
      });
    await expect(reader.send(new GetDurableExecutionCommand({ DurableExecutionArn: arn }))).rejects.toEqual(denied('lambda:GetDurableExecution', arn));
    // The callback id says nothing of its execution; the gateway found it, and authorized on it.
    await expect(reader.send(new SendDurableExecutionCallbackSuccessCommand({ CallbackId: callbackId, Result: new Uint8Array() }))).rejects.toEqual(
      denied('lambda:SendDurableExecutionCallbackSuccess', arn),
    );
    // Invoking the alias is authorized on the alias's ARN, which the unqualified grant does not cover.
    await expect(reader.send(new InvokeCommand({ FunctionName: 'AsyncMcp-approve_durable', Qualifier: 'live', InvocationType: 'Event' }))).rejects.toEqual(
      denied('lambda:InvokeFunction', ALIAS),
    );
  });

  it('answers a request signed with a key it never issued with UnrecognizedClientException and 403, as Lambda does', async () => {
    const { clientAs } = await setUp();
    const stranger = clientAs(MCP.arn, 'stranger', { accessKeyId: 'ASIANOTISSUED0000000', secretAccessKey: 'x', sessionToken: 'y' });
    await expect(stranger.send(new GetDurableExecutionCommand({ DurableExecutionArn: `${FUNCTION}:$LATEST/durable-execution/x/y` }))).rejects.toEqual(
      expect.objectContaining({ name: 'UnrecognizedClientException', $metadata: expect.objectContaining({ httpStatusCode: 403 }) }),
    );
  });
});
