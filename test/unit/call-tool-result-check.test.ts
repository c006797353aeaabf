/**
 * Status sync shapes results at completion without the MCP SDK or zod
 * (lambdas/mcp/results/result-shaping.ts), so its CallToolResult check is written out: it
 * must agree with the SDK's own schema on what is and is not a CallToolResult, and an
 * answer read without the SDK must equal the one the MCP side gives.
 */
import { ProtocolError, specTypeSchemas } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lambdas/operations/operation.ts';
import { callToolResultProblem, finishedAnswer, shapeFinishedResult } from '../../lambdas/mcp/results/result-shaping.ts';
import { toCallToolResult } from '../../lambdas/mcp/results/tool-result.ts';

const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==';
const text = { type: 'text', text: 'hi' };

const CASES: [string, unknown][] = [
  [
    'every content kind',
    {
      content: [
        text,
        { type: 'image', data: PNG, mimeType: 'image/png' },
        { type: 'audio', data: 'UklGRg==', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'a://b', text: 't' } },
        { type: 'resource', resource: { uri: 'a://b', blob: 'AAEC' } },
        { type: 'resource_link', uri: 'a://l', name: 'l', size: 3, icons: [{ src: 'https://x/i.png', theme: 'dark' }] },
      ],
    },
  ],
  ['empty content, isError, structuredContent and _meta', { content: [], isError: true, structuredContent: { n: 1 }, _meta: { k: 1 } }],
  ['no content at all', {}],
  ['unknown keys', { content: [{ ...text, extra: 1 }], extra: true }],
  ['annotations', { content: [{ ...text, annotations: { audience: ['user', 'assistant'], priority: 0.5, lastModified: '2026-01-31T10:00:00.5+02:00' } }] }],
  ['not an object', 'text'],
  ['an array', [text]],
  ['null', null],
  ['content not an array', { content: text }],
  ['isError a string', { content: [], isError: 'yes' }],
  ['_meta an array', { content: [], _meta: [] }],
  ['a block not an object', { content: ['text'] }],
  ['an unknown block type', { content: [{ type: 'video', data: PNG }] }],
  ['text without text', { content: [{ type: 'text' }] }],
  ['text a number', { content: [{ type: 'text', text: 1 }] }],
  ['image without mimeType', { content: [{ type: 'image', data: PNG }] }],
  ['image data not base64', { content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] }],
  ['resource without uri', { content: [{ type: 'resource', resource: { text: 't' } }] }],
  ['resource with neither text nor blob', { content: [{ type: 'resource', resource: { uri: 'a://b' } }] }],
  ['resource blob not base64', { content: [{ type: 'resource', resource: { uri: 'a://b', blob: '!!' } }] }],
  ['resource_link without name', { content: [{ type: 'resource_link', uri: 'a://l' }] }],
  ['resource_link size a string', { content: [{ type: 'resource_link', uri: 'a://l', name: 'l', size: '3' }] }],
  ['an icon without src', { content: [{ type: 'resource_link', uri: 'a://l', name: 'l', icons: [{}] }] }],
  ['an audience of system', { content: [{ ...text, annotations: { audience: ['system'] } }] }],
  ['a priority above 1', { content: [{ ...text, annotations: { priority: 2 } }] }],
  ['a lastModified without offset', { content: [{ ...text, annotations: { lastModified: '2026-01-31T10:00:00' } }] }],
  ['a lastModified on 30 February', { content: [{ ...text, annotations: { lastModified: '2026-02-30T10:00:00Z' } }] }],
  ['a block _meta an array', { content: [{ ...text, _meta: [] }] }],
];

describe('the CallToolResult check without the SDK', () => {
  it.each(CASES)('agrees with the SDK schema: %s', (_name, value) => {
    const sdkAccepts = !(
      'issues' in specTypeSchemas.CallToolResult['~standard'].validate(value) && specTypeSchemas.CallToolResult['~standard'].validate(value).issues
    );
    expect(callToolResultProblem(value) === undefined).toBe(sdkAccepts);
  });

  it('names the problem where the SDK-based check did', () => {
    expect(callToolResultProblem({ content: [{ type: 'image', data: 'not base64!', mimeType: 'image/png' }] })).toBe('content[0].data: Invalid Base64 string');
    expect(callToolResultProblem({ content: [{ type: 'image', data: PNG }] })).toContain('content[0].mimeType');
    expect(callToolResultProblem({ content: [], isError: 'yes' })).toContain('isError');
  });
});

describe('a finished answer read without the SDK', () => {
  const tool = { name: 'typed', outputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } };
  const outcomes: Outcome[] = [
    { kind: 'result', output: { n: 1 } },
    { kind: 'result', output: { n: 'one' } },
    { kind: 'result', output: { content: [{ type: 'video' }] } },
    { kind: 'stored-result', resultId: 'r1', mimeType: 'application/json', bytes: 2_000_000 },
    { kind: 'tool-error', error: 'Boom', cause: '{"errorType":"Boom","errorMessage":"it broke","trace":["/var/task/x.js"]}' },
    { kind: 'protocol-error', code: -32602, message: 'bad', data: { field: 'x' } },
    { kind: 'internal-error', message: 'our fault' },
    { kind: 'call-tool-result', result: { content: [text] } },
  ];

  it.each(outcomes.map((outcome) => [outcome.kind, outcome] as const))('equals the MCP side: %s', (_kind, outcome) => {
    let expected: unknown;
    try {
      expected = { result: toCallToolResult(outcome, tool) };
    } catch (error) {
      if (!(error instanceof ProtocolError)) throw error;
      expected = { error: { code: error.code, message: error.message, ...(error.data === undefined ? {} : { data: error.data }) } };
    }
    expect(finishedAnswer(outcome, tool)).toEqual(expected);
  });

  it('shaping at completion stores a broken output as our internal error', () => {
    expect(shapeFinishedResult({ kind: 'result', output: { n: 'one' } }, tool)).toMatchObject({
      kind: 'internal-error',
      message: expect.stringContaining('does not match its outputSchema'),
    });
    expect(shapeFinishedResult({ kind: 'result', output: { n: 1 } }, tool)).toEqual({
      kind: 'call-tool-result',
      result: { content: [{ type: 'text', text: '{"n":1}' }], structuredContent: { n: 1 } },
    });
  });
});
