/**
 * A durable tool defined in its durable.ts alone (issue 49, `defineTool`), given to the local
 * stack as `npm start -- --tools DIR` gives it: listed with the JSON Schema derived from its
 * zod schemas, called synchronously by both SDK clients, its arguments checked against that
 * schema, and a result that breaks its outputSchema refused naming the field.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../cdk/repo-paths.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { type AnyClient, sdkClients } from '../support/sdk-clients.ts';

const DEFINED_TOOLS_DIR = join(REPO_ROOT, 'test', 'fixtures', 'defined-tools');

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack({ toolsDir: DEFINED_TOOLS_DIR });
});
afterAll(async () => {
  await stack?.close();
});

describe.each(sdkClients(() => stack.url, 'define-tool'))('a tool defined with defineTool, through %s', (_label, connect) => {
  let client: AnyClient;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('is listed with numbers as an array of numbers, at least one, described as its zod schema describes it', async () => {
    const { tools } = await client.listTools();
    const tool = tools.find((t) => t.name === 'sum_slowly');
    expect(tool?.description).toMatch(/^Adds numbers, one checkpointed step each\./);
    expect(tool?.inputSchema).toEqual({
      type: 'object',
      properties: { numbers: { type: 'array', items: { type: 'number' }, minItems: 1, description: 'The numbers to add.' } },
      required: ['numbers'],
    });
    // A client without long-running support also sees the handle a long call may answer with instead.
    const listed = tool?.outputSchema as { anyOf?: unknown[] } | undefined;
    expect(listed?.anyOf ?? [listed]).toContainEqual({
      type: 'object',
      properties: { sum: { type: 'number' } },
      required: ['sum'],
      additionalProperties: false,
    });
  });

  it('answers a synchronous call with { sum }', async () => {
    const result = await client.callTool({ name: 'sum_slowly', arguments: { numbers: [1, 2, 3.5] } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ sum: 6.5 });
    expect(result.content).toEqual([{ type: 'text', text: JSON.stringify({ sum: 6.5 }) }]);
  });
});

describe('the arguments and the result of a defineTool tool', () => {
  it('numbers: [] is -32602, naming numbers', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'sum_slowly', arguments: { numbers: [] } });
    expect(response.message?.error?.code).toBe(-32602);
    expect(response.message?.error?.message).toMatch(/numbers/);
  });

  it('a handler that returns { sum: "x" } past the compiler is refused, naming sum, as a state machine output that breaks its outputSchema is', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'sum_wrongly', arguments: { numbers: [1, 2] } });
    expect(response.message?.result).toBeUndefined();
    expect(response.message?.error?.code).toBe(-32603);
    expect(response.message?.error?.message).toMatch(/^Tool sum_wrongly produced output that does not match its outputSchema: .*sum/);
  });
});
