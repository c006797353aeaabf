/**
 * The operation card as built: one self-contained HTML document that makes no request of
 * its own (MCP Apps: "If `ui.csp` is omitted, Host MUST use ... connect-src 'none'"), the
 * card's reading of the tool results each dialect hands a host, and what a session keeps
 * of a host's MCP Apps declaration.
 */
import { describe, expect, it } from 'vitest';
import { buildOperationCardHtml } from '../../lambdas/mcp/apps/build-operation-card.ts';
import { mcpAppsCapabilityOf } from '../../lambdas/mcp/apps/operation-card.ts';
import { operationRefOf } from '../../lambdas/mcp/apps/operation-card/operation-ref.ts';

describe('the built card', () => {
  const html = buildOperationCardHtml();

  it('is one HTML5 document with its script and stylesheet inline', () => {
    expect(html.startsWith('<!doctype html>')).toBe(true);
    expect(html.match(/<script\b/g)).toHaveLength(1);
    expect(html.match(/<\/script>/g)).toHaveLength(1);
    expect(html.match(/<style\b/g)).toHaveLength(1);
    expect(html).not.toContain('<!--card-script-->');
    expect(html).not.toContain('<!--card-style-->');
  });

  it('loads nothing from anywhere: no src or href attributes, no @import, no url(), no fetch', () => {
    expect(html).not.toMatch(/<(script|img|link|iframe)\b[^>]*\b(src|href)=/i);
    expect(html).not.toMatch(/@import/i);
    expect(html).not.toMatch(/url\(/i);
    expect(html).not.toMatch(/\bfetch\(|XMLHttpRequest|WebSocket|EventSource/);
  });

  it('stays small: under 40 KB', () => {
    expect(Buffer.byteLength(html)).toBeLessThan(40 * 1024);
  });
});

describe('which operation a tool result names', () => {
  it('a handle answer: structuredContent.operationId with its status', () => {
    expect(operationRefOf({ content: [], structuredContent: { operationId: 'op-1', status: 'working', pollAfterSeconds: 2 } })).toEqual({
      operationId: 'op-1',
      final: false,
    });
  });

  it('a 2026-07-28 CreateTaskResult (resultType "task") and a 2025-11-25 one ({ task })', () => {
    expect(operationRefOf({ resultType: 'task', taskId: 't-1', status: 'working' })).toEqual({ operationId: 't-1', final: false });
    expect(operationRefOf({ task: { taskId: 't-2', status: 'working' } })).toEqual({ operationId: 't-2', final: false });
  });

  it('a SEP-1391 answer: _operation.token, final once its operation status is terminal', () => {
    expect(operationRefOf({ content: [], operation: { status: 'working' }, _operation: { token: 'tok' } })).toEqual({ operationId: 'tok', final: false });
    expect(operationRefOf({ content: [], operation: { status: 'completed' }, _operation: { token: 'tok' } })).toEqual({ operationId: 'tok', final: true });
  });

  it('a finished task result names its task in the related-task metadata; a plain result names none', () => {
    expect(operationRefOf({ content: [], _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't-3' } } })).toEqual({ operationId: 't-3', final: true });
    expect(operationRefOf({ content: [{ type: 'text', text: '{"count":1}' }], structuredContent: { count: 1 } })).toEqual({ final: true });
  });
});

describe('what an initialize-era session keeps of an MCP Apps declaration', () => {
  it('the extension with the one profile the card needs, and nothing for any other declaration', () => {
    const ui = (mimeTypes: unknown) => ({ extensions: { 'io.modelcontextprotocol/ui': { mimeTypes, features: ['x'.repeat(2000)] } } });
    expect(mcpAppsCapabilityOf(ui(['text/uri-list', 'text/html;profile=mcp-app']))).toEqual({
      extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } },
    });
    expect(mcpAppsCapabilityOf(ui(['text/uri-list']))).toEqual({});
    expect(mcpAppsCapabilityOf({ extensions: { 'io.modelcontextprotocol/tasks': {} }, elicitation: {} })).toEqual({});
  });
});
