/**
 * Content of every kind from a state machine, end to end: the conformance fixture tools
 * (`test/conformance/tools`) called over the local stack by the SDK v2 client (2026-07-28)
 * and the v1 client (2025-11-25). Also the listing fields tool.json carries (annotations,
 * icons, _meta) in every era, JSON Schema 2020-12 input and output schemas, and SEP-2243
 * custom headers accepted and refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { firstText, sdkClients, type AnyClient } from '../support/sdk-clients.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, rpcError } from '../support/rpc-assertions.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const WAV = 'UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/conformance/tools' });
});
afterAll(async () => {
  await stack?.close();
});

const clients = sdkClients(() => stack.url, 'e2e-content');

describe.each(clients)('%s', (_label, connect) => {
  let client: AnyClient;
  beforeAll(async () => {
    client = await connect();
  });
  afterAll(async () => {
    await client?.close();
  });

  it('receives text content', async () => {
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'This is a simple text response for testing.' }]);
  });

  it('receives image content with its data and mimeType', async () => {
    const result = await client.callTool({ name: 'test_image_content', arguments: {} });
    expect(result.content).toEqual([{ type: 'image', data: PNG, mimeType: 'image/png' }]);
  });

  it('receives audio content with its data and mimeType', async () => {
    const result = await client.callTool({ name: 'test_audio_content', arguments: {} });
    expect(result.content).toEqual([{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]);
  });

  it('receives an embedded resource', async () => {
    const result = await client.callTool({ name: 'test_embedded_resource', arguments: {} });
    expect(result.content).toEqual([
      { type: 'resource', resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' } },
    ]);
  });

  it('receives text, image, embedded resource and resource_link in one result, in order', async () => {
    const result = await client.callTool({ name: 'test_multiple_content_types', arguments: {} });
    expect(result.content.map((block: { type: string }) => block.type)).toEqual(['text', 'image', 'resource', 'resource_link']);
    expect(result.content[3]).toEqual({
      type: 'resource_link',
      uri: 'test://mixed-content-resource',
      name: 'mixed-content-resource',
      mimeType: 'application/json',
      description: 'The same resource, linked instead of embedded.',
    });
  });

  it('receives a tool failure as isError with its message', async () => {
    const result = await client.callTool({ name: 'test_error_handling', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toContain('This tool intentionally returns an error for testing');
  });

  it('sees annotations, icons and _meta from tool.json in tools/list', async () => {
    const { tools } = await client.listTools();
    const listed = tools.find((t) => t.name === 'test_simple_text')!;
    expect(listed.annotations).toEqual({ title: 'Simple text', readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false });
    expect(listed.icons).toEqual([{ src: `data:image/png;base64,${PNG}`, mimeType: 'image/png', sizes: ['1x1'] }]);
    expect(listed._meta).toEqual({ 'example.com/fixture': 'reference-server' });
  });

  it('calls a tool whose input and output schemas use JSON Schema 2020-12 ($defs, $ref, prefixItems)', async () => {
    const args = { name: 'Ada', address: { street: '1 Loop Rd', city: 'London' }, contactMethod: 'email', email: 'ada@example.com' };
    const result = await client.callTool({ name: 'json_schema_2020_12_tool', arguments: args });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ contact: args, dialect: ['https://json-schema.org/draft/2020-12/schema', 2020] });
  });

  it('calls a tool with custom headers declared, and its arguments arrive', async () => {
    const result = await client.callTool({ name: 'test_custom_headers', arguments: { region: '  eu-west-1 ✓', priority: 3, verbose: true, query: 'orders' } });
    expect(result.content).toEqual([{ type: 'text', text: 'Looked up orders in region   eu-west-1 ✓' }]);
  });
});

describe('tools/list carries the listing fields in every era', () => {
  it.each([
    ['2026-07-28', () => modernRequest(stack.url, 'tools/list')],
    ['2025-11-25', () => legacyRequest(stack.url, 'tools/list')],
    ['2025-06-18', () => legacyRequest(stack.url, 'tools/list', {}, { version: '2025-06-18' })],
    ['2025-03-26', () => legacyRequest(stack.url, 'tools/list', {}, { version: '2025-03-26' })],
  ])('%s', async (_version, list) => {
    const listed = (ok(await list()).tools as Array<Record<string, unknown>>).find((t) => t.name === 'test_simple_text')!;
    expect(listed).toMatchObject({
      annotations: { readOnlyHint: true },
      icons: [{ mimeType: 'image/png' }],
      _meta: { 'example.com/fixture': 'reference-server' },
    });
  });

  it('keeps the JSON Schema 2020-12 keywords of an inputSchema as written', async () => {
    const listed = (
      ok(await modernRequest(stack.url, 'tools/list')).tools as Array<{
        name: string;
        inputSchema: unknown;
        outputSchema: { properties: { dialect: { prefixItems: unknown[] } } };
      }>
    ).find((t) => t.name === 'json_schema_2020_12_tool')!;
    expect(listed.inputSchema).toMatchObject({
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      $defs: { address: { $anchor: 'addressDef' } },
      properties: { address: { $ref: '#/$defs/address' } },
      allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
      if: expect.any(Object),
      // biome-ignore lint/suspicious/noThenProperty: the JSON Schema `then` keyword the test checks is kept, not a thenable
      then: { required: ['phone'] },
      else: { required: ['email'] },
      additionalProperties: false,
    });
    expect(listed.outputSchema.properties.dialect.prefixItems).toHaveLength(2);
  });
});

describe('JSON Schema 2020-12 arguments are validated', () => {
  it('a $ref into $defs is followed: a street that is not a string is -32602', async () => {
    const error = rpcError(
      await modernRequest(stack.url, 'tools/call', { name: 'json_schema_2020_12_tool', arguments: { address: { street: 1 }, email: 'a@example.com' } }),
    );
    expect(error.code).toBe(-32602);
    expect(error.message).toContain('street');
  });

  it('if/then applies: contactMethod "phone" without a phone is -32602', async () => {
    const error = rpcError(
      await modernRequest(stack.url, 'tools/call', { name: 'json_schema_2020_12_tool', arguments: { contactMethod: 'phone', email: 'a@example.com' } }),
    );
    expect(error.code).toBe(-32602);
  });
});

describe('SEP-2243 custom headers (2026-07-28)', () => {
  const callWith = (headers: Record<string, string>, args: Record<string, unknown> = { region: 'us-east-1', priority: 2, query: 'q' }) =>
    modernRequest(stack.url, 'tools/call', { name: 'test_custom_headers', arguments: args }, { headers });

  it('headers that match the arguments are accepted, literal or Base64', async () => {
    const literal = await callWith({ 'mcp-param-region': 'us-east-1', 'mcp-param-priority': '2' });
    expect(ok(literal).content[0].text).toBe('Looked up q in region us-east-1');
    const encoded = await callWith({ 'mcp-param-region': `=?base64?${Buffer.from('us-east-1').toString('base64')}?=`, 'mcp-param-priority': '2' });
    expect(ok(encoded).content[0].text).toBe('Looked up q in region us-east-1');
  });

  it('a header the client MUST omit (null or absent value) is not required', async () => {
    const response = await callWith({ 'mcp-param-region': 'us-east-1' }, { region: 'us-east-1', query: 'q' });
    expect(ok(response).content[0].text).toBe('Looked up q in region us-east-1');
  });

  it.each([
    ['missing while the body carries the value', { 'mcp-param-priority': '2' }, 'Mcp-Param-Region'],
    ['not matching the body', { 'mcp-param-region': 'eu-west-1', 'mcp-param-priority': '2' }, 'Mcp-Param-Region'],
    ['with invalid Base64 padding', { 'mcp-param-region': '=?base64?dXMtZWFzdC0?=', 'mcp-param-priority': '2' }, 'Mcp-Param-Region'],
    ['an integer that differs', { 'mcp-param-region': 'us-east-1', 'mcp-param-priority': '3' }, 'Mcp-Param-Priority'],
  ])('a header %s is refused with HTTP 400 and -32020', async (_case, headers, header) => {
    const logs = captureLogs('request rejected');
    const response = await callWith(headers);
    expect(response.status).toBe(400);
    // Logged as a rejection (WARN), naming what did not match and no value.
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'WARN', error: 'Mcp-Param header does not match the arguments' })]);
    const error = rpcError(response);
    expect(error.code).toBe(-32020);
    expect(error.data).toEqual({ mismatch: { header, body: header === 'Mcp-Param-Region' ? 'region' : 'priority' } });
    // The refusal names the header, never the values (they are tool arguments).
    expect(error.message).not.toContain('us-east-1');
  });

  it('legacy-era requests carry no custom headers and are not checked', async () => {
    const response = await legacyRequest(stack.url, 'tools/call', { name: 'test_custom_headers', arguments: { region: 'us-east-1', query: 'q' } });
    expect(ok(response).content[0].text).toBe('Looked up q in region us-east-1');
  });
});
