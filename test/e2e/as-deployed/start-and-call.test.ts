/**
 * What `cdk deploy` would deploy, run from the cloud assembly (auth=none): the MCP function's
 * bundled asset behind its Function URL, the workers' assets, the state machines' resolved
 * definitions, every call through the IAM gateways, driven by the v2 MCP client end to end.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { expectStatsOf } from '../../support/expected-stats.ts';
import { MODERN_VERSION, modernDispatch } from '../../support/raw-mcp.ts';

let stack: DeployedLocalStack;
let logs: string[];

beforeAll(async () => {
  ({ stack, logs } = await startAssemblyStack(await deployedAssembly(NO_AUTH)));
}, 240_000);
afterAll(async () => {
  await stack?.close();
});

async function connect() {
  const client = new Client({ name: 'as-deployed', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(stack.url));
  const session = createTaskSessionFromClient(client, {
    endpointId: 'as-deployed',
    rawDispatch: modernDispatch(stack.url) as never,
    v2RequestFraming: { protocolVersion: MODERN_VERSION, clientInfo: { name: 'as-deployed', version: '1.0.0' }, clientCapabilities: {} },
  });
  return { client, session };
}

describe('the assembly-built stack, with the v2 Client (2026-07-28)', () => {
  it("lists tools the MCP function was bundled with (its asset's state-machines/)", async () => {
    const { client, session } = await connect();
    try {
      const names: string[] = [];
      let cursor: string | undefined;
      do {
        const page = await client.listTools(cursor ? { cursor } : undefined);
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor);
      // Without the tasks extension declared, the tools a client must call as tasks are not listed.
      expect(names).toEqual(expect.arrayContaining(['quick_calculation', 'run_test_suite']));
      const bundled = readdirSync(
        join(stack.model.functions.find((f) => f.logicalId === stack.model.functionUrl!.targetFunctionLogicalId)!.assetDir, 'state-machines'),
      );
      // Besides them, at most the server's own handle tools (operation_*), which no folder defines.
      for (const name of names.filter((n) => !n.startsWith('operation_'))) expect(bundled).toContain(name);
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('completes quick_calculation: StartSyncExecution of the EXPRESS machine invokes the calculate worker by its ARN', async () => {
    const { client, session } = await connect();
    try {
      const execution = await session.callTool('quick_calculation', { a: 6, b: 7, op: 'mul' });
      const { outcome } = await execution.settle();
      const result = resultFromTaskOutcome(outcome) as unknown as { structuredContent: { result: number }; isError?: boolean };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent.result).toBe(42);
      // The worker ran from its own asset, and logged under its logical id.
      const worker = stack.model.functions.find((f) => f.logicalId.includes('calculate'))!;
      expect(logs.some((line) => line.startsWith(`[${worker.logicalId}] REPORT RequestId:`))).toBe(true);
    } finally {
      await session.close();
      await client.close();
    }
  });

  it('completes analyze_dataset as a task: the STANDARD machine runs, status sync hears its end through the event rule, the result is right', async () => {
    const { client, session } = await connect();
    try {
      const execution = await session.callTool('analyze_dataset', { rows: 150_001, seed: 3 });
      expect(execution.kind).toBe('task');
      const { outcome } = await execution.settle();
      const stats = (resultFromTaskOutcome(outcome) as { structuredContent: Record<string, number> }).structuredContent;
      expectStatsOf(stats, 150_001, 3);
      await stack.drainEvents();
      const statusSync = stack.model.functions.find((f) => f.logicalId.includes('StatusSync'))!;
      expect(logs.some((line) => line.startsWith(`[${statusSync.logicalId}] REPORT RequestId:`))).toBe(true);
      // Every call the roles made was allowed: nothing the repository's tools do lacks a grant.
      expect(stack.authority.decisions().filter((d) => !d.allowed)).toEqual([]);
    } finally {
      await session.close();
      await client.close();
    }
  });
});
