/**
 * The local stack reads a defineTool durable.ts's definition through the process's own import,
 * the one it then takes the handler from: the module is loaded once, not once for the tool list
 * and again for the handler, and the tool it lists is the code it runs.
 */
import { resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';

const TOOLS = resolve(import.meta.dirname, '..', 'fixtures', 'defined-tool-loads');
const loads = () => (globalThis as { countLoadsModuleLoads?: number }).countLoadsModuleLoads ?? 0;

const stacks: LocalStack[] = [];
afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.close()));
});

describe('a defineTool durable.ts on the local stack', () => {
  it('is loaded once for its definition and its handler, and a second stack in the process loads it no more', async () => {
    const before = loads();
    const stack = await startTestStack({ toolsDir: TOOLS });
    stacks.push(stack);
    expect(loads() - before).toBe(1);
    const client = new Client({ name: 'loads', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(stack.url));
    try {
      const listed = await client.listTools();
      expect(listed.tools.map((tool) => tool.name)).toContain('count_loads');
      const result = await client.callTool({ name: 'count_loads', arguments: {} });
      expect(result.structuredContent).toEqual({ loads: loads() });
    } finally {
      await client.close();
    }
    stacks.push(await startTestStack({ toolsDir: TOOLS }));
    expect(loads() - before).toBe(1);
  });
});
