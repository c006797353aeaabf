/**
 * The foundation end to end: the local stack (dynalite, the Step Functions facade,
 * the event bus and the real HTTP handler) driven by real MCP clients of both eras
 * and by raw HTTP for the error cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { firstText, sdkClients, type AnyClient } from '../support/sdk-clients.ts';
import { legacyRequest, modernRequest, postRaw, postWithHost } from '../support/raw-mcp.ts';
import { rpcError } from '../support/rpc-assertions.ts';

let stack: LocalStack;

beforeAll(async () => {
  // Handle tools off: this file checks what a client without async support sees when the server serves none.
  stack = await startTestStack({ handleTools: false });
});
afterAll(async () => {
  await stack?.close();
});

const clients = sdkClients(() => stack.url, 'e2e');

describe.each(clients)('%s', (_label, connect) => {
  let client: AnyClient;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('lists the tools in a deterministic order', async () => {
    const { tools } = await client.listTools();
    const names = tools.map((t) => t.name);
    expect(names).toEqual([...names].sort());
    expect(names).toEqual(expect.arrayContaining(['quick_calculation', 'run_test_suite']));
    const calc = tools.find((t) => t.name === 'quick_calculation')!;
    expect(calc.inputSchema).toMatchObject({ type: 'object', required: expect.arrayContaining(['a', 'b', 'op']) });
  });

  it('calls quick_calculation and gets structured content', async () => {
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 6, b: 7, op: 'mul' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ result: 42 });
    expect(JSON.parse(firstText(result))).toEqual({ result: 42 });
  });

  it('reports division by zero as a tool error, not a protocol error', async () => {
    const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 1, b: 0, op: 'div' } });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/DivisionByZero/);
  });

  it('runs the hybrid run_test_suite synchronously and returns the report', async () => {
    const result = await client.callTool({
      name: 'run_test_suite',
      arguments: { suite: 'unit', tests: 10, failures: 3, durationSeconds: 0 },
    });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ suite: 'unit', passed: 7, failed: 3, durationSeconds: 0 });
  });

  it('returns a crashed suite as isError with the error and its cause', async () => {
    const result = await client.callTool({
      name: 'run_test_suite',
      arguments: { suite: 'unit', tests: 5, failures: 0, durationSeconds: 0, crash: true },
    });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/Error: TestSuiteCrashed/);
    expect(firstText(result)).toMatch(/Cause: .+/);
  });

  it('rejects invalid arguments with -32602 naming the field', async () => {
    await expect(client.callTool({ name: 'quick_calculation', arguments: { a: 'six', b: 7, op: 'mul' } })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('arguments.a'),
    });
  });

  it('rejects an unknown tool with -32602', async () => {
    await expect(client.callTool({ name: 'no_such_tool', arguments: {} })).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining('Unknown tool: no_such_tool'),
    });
  });
});

describe('raw HTTP error cases', () => {
  it('answers malformed JSON with -32700 and HTTP 400', async () => {
    const response = await postRaw(stack.url, '{"jsonrpc": "2.0", "id": 1, "method": ');
    expect(response.status).toBe(400);
    expect(response.message?.error?.code).toBe(-32700);
  });

  it('answers a body over 1 MB with HTTP 413 and a JSON-RPC error', async () => {
    const huge = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { pad: 'x'.repeat(1024 * 1024) } });
    const response = await postRaw(stack.url, huge);
    expect(response.status).toBe(413);
    expect(rpcError(response)).toMatchObject({ code: -32600, message: expect.stringMatching(/exceeds|too large/i) });
  });

  it('rejects a foreign Host header (DNS rebinding protection)', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const response = await postWithHost(stack.url, 'evil.example', body);
    expect(response.status).toBe(403);
    expect((await postWithHost(stack.url, `localhost:${stack.url.port}`, body)).status).toBe(200);
  });

  it('rejects a foreign Origin header', async () => {
    const response = await legacyRequest(stack.url, 'tools/list', {}, { headers: { origin: 'http://evil.example' } });
    expect(response.status).toBe(403);
  });

  it('accepts a localhost Origin', async () => {
    const response = await legacyRequest(stack.url, 'tools/list', {}, { headers: { origin: `http://localhost:${stack.url.port}` } });
    expect(response.status).toBe(200);
    expect(response.message?.result?.tools).toBeDefined();
  });

  it('names the failing field for invalid arguments (modern era)', async () => {
    const response = await modernRequest(stack.url, 'tools/call', { name: 'quick_calculation', arguments: { a: 1, op: 'add' } });
    expect(response.message?.error).toMatchObject({ code: -32602, message: expect.stringContaining('arguments.b is required') });
  });

  it('hides async-only tools from clients without async support', async () => {
    const modern = await modernRequest(stack.url, 'tools/list');
    expect(modern.message?.result?.tools.map((t: { name: string }) => t.name)).not.toContain('analyze_dataset');
    const old = await legacyRequest(stack.url, 'tools/list', {}, { version: '2025-06-18' });
    const oldTools = old.message?.result?.tools as Array<Record<string, unknown>>;
    expect(oldTools.map((t) => t.name)).toEqual(['count_primes_durable', 'quick_calculation', 'run_test_suite']);
    expect(oldTools.every((t) => !('invocationMode' in t) && !('execution' in t))).toBe(true);
  });

  it('answers an async-only tool called by an old client with -32600', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 } }, { version: '2025-06-18' });
    expect(response.message?.error).toMatchObject({ code: -32600, message: expect.stringContaining('long-running') });
  });

  it('answers a state machine protocol error as a JSON-RPC error', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', {
      name: 'run_test_suite',
      arguments: { suite: 's', tests: 1, failures: 2, durationSeconds: 0 },
    });
    expect(response.message?.error).toMatchObject({ code: -32602, message: expect.stringContaining('failures must not exceed tests') });
  });

  it('If the server does not implement the requested RPC method, it MUST respond with 404 Not Found and -32601 (2026-07-28)', async () => {
    const modern = await modernRequest(stack.url, 'acme/not-a-method', {});
    expect(modern.status).toBe(404);
    expect(modern.message?.error?.code).toBe(-32601);
    const legacy = await legacyRequest(stack.url, 'acme/not-a-method', {});
    expect(legacy.message?.error?.code).toBe(-32601);
  });

  it('answers server/discover with the server info and the tools capability', async () => {
    const response = await modernRequest(stack.url, 'server/discover', {});
    expect(response.status).toBe(200);
    expect(response.message?.result).toMatchObject({
      supportedVersions: ['2026-07-28'],
      capabilities: { tools: {} },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'async-mcp' } },
    });
  });

  it('never crashes on a request with no method or wrong types', async () => {
    const logs = captureLogs('request rejected');
    for (const body of ['[]', '{"jsonrpc":"2.0","id":1}', '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}', 'null']) {
      const response = await postRaw(stack.url, body, { 'mcp-protocol-version': '2025-11-25' });
      expect(response.status).toBeLessThan(500);
    }
    // The two bodies that are no JSON-RPC message at all ([] and null) are logged as rejections, not errors.
    expect(logs.entries).toHaveLength(2);
    for (const entry of logs.entries) expect(entry).toMatchObject({ level: 'WARN', error: expect.stringContaining('invalid-json-rpc-body') });
    const ok = await legacyRequest(stack.url, 'tools/list');
    expect(ok.status).toBe(200);
  });
});
