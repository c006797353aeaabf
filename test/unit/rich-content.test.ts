/**
 * The pieces behind "content of every kind": a CallToolResult a state machine built is
 * passed through once it checks out, and refused with -32603 naming the problem when it
 * does not; tool.json listing fields and `x-mcp-header` declarations are checked at load;
 * `Mcp-Param-*` values decode as SEP-2243 says.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { customHeaderMismatch, decodeHeaderValue } from '../../lambdas/mcp/edge/custom-headers.ts';
import { callToolResultProblem, toCallToolResult } from '../../lambdas/mcp/results/tool-result.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { crossFieldProblems, ToolConfigSchema } from '../../lambdas/tools/tool-config.ts';
import { headerDeclarationsOf } from '../../lambdas/tools/header-declarations.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const tool = testTool({ name: 'content_tool' });

function internalError(run: () => unknown): ProtocolError {
  const error = (() => {
    try {
      run();
    } catch (e) {
      return e;
    }
    throw new Error('expected a ProtocolError');
  })();
  expect(error).toBeInstanceOf(ProtocolError);
  expect((error as ProtocolError).code).toBe(-32603);
  return error as ProtocolError;
}

describe('a CallToolResult from a state machine', () => {
  it('passes through with every content kind, structuredContent, isError and _meta as written', () => {
    const output = {
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'test://r', mimeType: 'text/plain', text: 'r' } },
        { type: 'resource', resource: { uri: 'test://b', blob: 'AAEC' } },
        { type: 'resource_link', uri: 'test://l', name: 'l', mimeType: 'text/csv' },
      ],
      structuredContent: { n: 1 },
      isError: false,
      _meta: { 'example.com/trace': 'abc' },
    };
    expect(toCallToolResult({ kind: 'result', output }, tool)).toBe(output);
  });

  it.each([
    [{ content: [{ type: 'image', data: PNG }] }, 'content[0].mimeType'],
    [{ content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] }, 'content[0].data: Invalid Base64 string'],
    [{ content: [{ type: 'video', data: PNG }] }, 'content[0].type: "video" is not one of text, image, audio, resource, resource_link'],
    [{ content: [{ type: 'resource_link', uri: 'test://l' }] }, 'content[0].name'],
    [{ content: ['just text'] }, 'content[0]: a content block must be an object'],
    [{ content: [], isError: 'yes' }, 'isError'],
  ])('an invalid one is -32603 naming the problem: %j', (output, named) => {
    expect(callToolResultProblem(output)).toContain(named);
    const error = internalError(() => toCallToolResult({ kind: 'result', output }, tool));
    expect(error.message).toContain('Tool content_tool produced output that is not a valid CallToolResult');
    expect(error.message).toContain(named);
  });

  it('with an outputSchema, its structuredContent must match it; an error result need not', () => {
    const typed = testTool({ name: 'typed', outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } });
    const good = { content: [{ type: 'text', text: '1' }], structuredContent: { n: 1 } };
    expect(toCallToolResult({ kind: 'result', output: good }, typed)).toBe(good);
    expect(internalError(() => toCallToolResult({ kind: 'result', output: { content: [], structuredContent: { n: 'one' } } }, typed)).message).toContain(
      'does not match its outputSchema',
    );
    expect(internalError(() => toCallToolResult({ kind: 'result', output: { content: [] } }, typed)).message).toContain('has no structuredContent');
    const failed = { content: [{ type: 'text', text: 'no' }], isError: true };
    expect(toCallToolResult({ kind: 'result', output: failed }, typed)).toBe(failed);
  });

  it('outputSchema validation follows JSON Schema 2020-12: $defs, $ref and prefixItems', () => {
    const typed = testTool({
      name: 'tuple',
      outputSchema: {
        $schema: 'https://json-schema.org/draft/2020-12/schema',
        type: 'object',
        $defs: { year: { type: 'integer', minimum: 1900 } },
        properties: { pair: { type: 'array', prefixItems: [{ type: 'string' }, { $ref: '#/$defs/year' }], items: false } },
        required: ['pair'],
      },
    });
    expect(toCallToolResult({ kind: 'result', output: { pair: ['x', 2020] } }, typed).structuredContent).toEqual({ pair: ['x', 2020] });
    expect(internalError(() => toCallToolResult({ kind: 'result', output: { pair: ['x', 1800] } }, typed)).message).toContain('pair/1 must be >= 1900');
    expect(internalError(() => toCallToolResult({ kind: 'result', output: { pair: ['x', 2020, 'extra'] } }, typed)).message).toContain('outputSchema');
  });
});

describe('tool.json listing fields', () => {
  const base = { name: 't', description: 'd', inputSchema: { type: 'object' }, invocation: 'sync' };
  const catalogOf = (config: Record<string, unknown>) =>
    buildToolCatalog([{ config: ToolConfigSchema.parse(config), definitionText: '{}' } as never], () => 'arn:aws:states:us-east-1:000000000000:stateMachine:t');

  it('annotations, icons and _meta are carried onto the tool spec', () => {
    const [spec] = catalogOf({
      ...base,
      annotations: { readOnlyHint: true, title: 'T' },
      icons: [{ src: 'https://example.com/t.png', mimeType: 'image/png', sizes: ['48x48', 'any'], theme: 'dark' }],
      _meta: { 'example.com/k': 1 },
    }).tools;
    expect(spec).toMatchObject({
      annotations: { readOnlyHint: true, title: 'T' },
      icons: [{ src: 'https://example.com/t.png', sizes: ['48x48', 'any'] }],
      meta: { 'example.com/k': 1 },
    });
  });

  it.each([
    [{ annotations: { readOnlyHnt: true } }, 'annotations'],
    [{ annotations: { readOnlyHint: 'yes' } }, 'readOnlyHint'],
    [{ icons: [{ src: 'http://example.com/t.png' }] }, 'icons'],
    [{ icons: [{ src: 'https://example.com/t.png', sizes: '48x48' }] }, 'sizes'],
  ])('a malformed field is refused at load: %j', (extra, path) => {
    const parsed = ToolConfigSchema.safeParse({ ...base, ...extra });
    expect(parsed.success).toBe(false);
    expect(JSON.stringify(parsed.error!.issues.map((i) => i.path))).toContain(path);
  });
});

describe('x-mcp-header declarations (SEP-2243)', () => {
  const schema = (properties: Record<string, unknown>, extra: Record<string, unknown> = {}) => ({ type: 'object', properties, ...extra });

  it('a string, integer or boolean property reached through properties is declared, at any depth', () => {
    const found = headerDeclarationsOf(
      schema({
        region: { type: 'string', 'x-mcp-header': 'Region' },
        nested: { type: 'object', properties: { on: { type: 'boolean', 'x-mcp-header': 'On' } } },
      }),
    );
    expect(found).toEqual({
      ok: true,
      declarations: [
        { path: ['region'], headerName: 'Region', type: 'string' },
        { path: ['nested', 'on'], headerName: 'On', type: 'boolean' },
      ],
    });
  });

  it.each([
    ['empty', schema({ v: { type: 'string', 'x-mcp-header': '' } }), 'non-empty'],
    ['on an object', schema({ v: { type: 'object', 'x-mcp-header': 'V' } }), 'string, integer or boolean'],
    ['on a number', schema({ v: { type: 'number', 'x-mcp-header': 'V' } }), 'string, integer or boolean'],
    ['with a space', schema({ v: { type: 'string', 'x-mcp-header': 'My Field' } }), 'HTTP token'],
    ['twice, ignoring case', schema({ a: { type: 'string', 'x-mcp-header': 'MyField' }, b: { type: 'string', 'x-mcp-header': 'myfield' } }), 'declared twice'],
    ['under $defs', schema({}, { $defs: { v: { type: 'string', 'x-mcp-header': 'V' } } }), 'through "properties" alone'],
    ['under items', schema({ list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'V' } } }), 'through "properties" alone'],
  ])('one %s is invalid, and the tool does not load', (_case, inputSchema, problem) => {
    const found = headerDeclarationsOf(inputSchema);
    expect(found.ok).toBe(false);
    expect(!found.ok && found.problem).toContain(problem);
    const config = ToolConfigSchema.parse({ name: 't', description: 'd', inputSchema, invocation: 'sync' });
    expect(crossFieldProblems(config).join('\n')).toContain(problem);
  });
});

describe('Mcp-Param-* header values', () => {
  it.each([
    ['=?base64?SGVsbG8=?=', 'Hello'],
    ['SGVsbG8=', 'SGVsbG8='],
    ['=?base64?SGVsbG8=', '=?base64?SGVsbG8='],
    ['=?base64?SGVsbG8?=', undefined],
    ['=?base64?SGVs!!!bG8=?=', undefined],
    ['=?base64?/w==?=', undefined],
  ])('%s decodes to %s', (header, decoded) => {
    expect(decodeHeaderValue(header)).toBe(decoded);
  });

  const headerTool = testTool({
    name: 'h',
    inputSchema: schemaWith({ region: { type: 'string', 'x-mcp-header': 'Region' }, priority: { type: 'integer', 'x-mcp-header': 'Priority' } }),
  });
  function schemaWith(properties: Record<string, unknown>) {
    return { type: 'object', properties };
  }

  it('an integer compares as a number: 42.0 in the header matches 42 in the body', () => {
    expect(customHeaderMismatch(headerTool, { priority: 42 }, new Headers({ 'mcp-param-priority': '42.0' }))).toBeUndefined();
  });

  it('a null body value needs no header, and a header for it is ignored', () => {
    expect(customHeaderMismatch(headerTool, { region: null }, new Headers({ 'mcp-param-region': 'anything' }))).toBeUndefined();
  });

  it('header names are matched without regard to case', () => {
    expect(customHeaderMismatch(headerTool, { region: 'x' }, new Headers({ 'MCP-PARAM-REGION': 'x' }))).toBeUndefined();
  });
});
