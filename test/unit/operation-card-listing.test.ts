/**
 * Who sees the operation card, over the real MCP edge on in-memory ports. MCP Apps:
 * "Servers SHOULD check client capabilities before registering UI-enabled tools", and a
 * client declares `io.modelcontextprotocol/ui` with its `mimeTypes`. A client that does not
 * gets byte for byte the answers it got before the card existed: the same server with the
 * card turned off is the reference, for every era and dialect.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAsyncMcpApp } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { createToolCatalog, type ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { serveFetch, type NodeHttpServer } from '../../local/node-http-server.ts';
import { TEST_LIMITS, TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { legacyRequest, modernRequest, type RawResponse } from '../support/raw-mcp.ts';
import { ok } from '../support/rpc-assertions.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

const CARD = 'ui://async-mcp/operation';
const MIME = 'text/html;profile=mcp-app';
const UI = { 'io.modelcontextprotocol/ui': { mimeTypes: [MIME] } };
const TOOLS: ToolSpec[] = [
  testTool({ name: 'job', title: 'A job', outputSchema: { type: 'object' } }),
  testTool({ name: 'suite', invocation: 'both', meta: { team: 'qa' } }),
  testTool({ name: 'calc', invocation: 'sync', workflowType: 'EXPRESS' }),
];

type Listed = { name: string; _meta?: Record<string, unknown> };

async function serve(operationCard: boolean): Promise<NodeHttpServer> {
  const app = createAsyncMcpApp({
    store: new InMemoryRecordStore(),
    engine: new FakeWorkflowEngine(),
    catalog: createToolCatalog(TOOLS),
    secretKey: TEST_SECRET_KEY,
    limits: TEST_LIMITS,
    logger: { error: () => undefined, warn: () => undefined },
    operationCard,
  });
  return serveFetch((request) => app.fetch(request, 'anonymous'), { host: '127.0.0.1', port: 0, path: '/mcp' });
}

let on: NodeHttpServer;
let off: NodeHttpServer;
beforeAll(async () => {
  [on, off] = await Promise.all([serve(true), serve(false)]);
});
afterAll(async () => {
  await Promise.all([on?.close(), off?.close()]);
});

/** One request of a client that does not declare MCP Apps, sent the same way to a server. */
type Ask = (url: URL, method: string, id: number, params?: Record<string, unknown>) => Promise<RawResponse>;

const NOT_DECLARING: Array<[string, Ask]> = [
  ['a 2025-06-18 client (handle tools)', (url, method, id, params = {}) => legacyRequest(url, method, params, { version: '2025-06-18', id })],
  ['a 2025-11-25 client (tasks implied)', (url, method, id, params = {}) => legacyRequest(url, method, params, { id })],
  [
    'a 2025-11-25 client declaring tasks in _meta',
    (url, method, id, params = {}) => legacyRequest(url, method, params, { id, capabilities: { tasks: { requests: { tools: { call: {} } } } } }),
  ],
  [
    'a SEP-1391 client',
    (url, method, id, params = {}) => legacyRequest(url, method, params, { id, capabilities: { experimental: { longRunningOperations: {} } } }),
  ],
  ['a 2026-07-28 client declaring nothing', (url, method, id, params = {}) => modernRequest(url, method, params, { id })],
  [
    'a 2026-07-28 Tasks extension client',
    (url, method, id, params = {}) => modernRequest(url, method, params, { id, capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } }),
  ],
  [
    'a 2026-07-28 client declaring MCP Apps without the HTML profile',
    (url, method, id, params = {}) =>
      modernRequest(url, method, params, { id, capabilities: { extensions: { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/uri-list'] } } } }),
  ],
  [
    'a 2026-07-28 client declaring elicitation and sampling',
    (url, method, id, params = {}) => modernRequest(url, method, params, { id, capabilities: { elicitation: { form: {} }, sampling: {} } }),
  ],
];

describe('clients that do not declare MCP Apps', () => {
  it.each(NOT_DECLARING)('%s gets byte-identical tools/list and resources/list answers with the card on and off', async (_label, ask) => {
    for (const method of ['tools/list', 'resources/list']) {
      const [withCard, without] = await Promise.all([ask(on.url, method, 7), ask(off.url, method, 7)]);
      expect(without.status).toBe(200);
      expect(withCard.status).toBe(without.status);
      expect(withCard.text).toBe(without.text);
      expect(withCard.text).not.toContain('ui://');
    }
  });

  it.each(NOT_DECLARING)('%s calling a card tool by name gets the same "Unknown tool" answer with the card on and off', async (_label, ask) => {
    const params = { name: 'operation_card_status', arguments: { operationId: 'x' } };
    const [withCard, without] = await Promise.all([ask(on.url, 'tools/call', 8, params), ask(off.url, 'tools/call', 8, params)]);
    expect(without.message?.error?.message).toBe('Unknown tool: operation_card_status');
    expect(withCard.status).toBe(without.status);
    expect(withCard.text).toBe(without.text);
  });

  it('cannot find the card tools in their listing, and the card is still readable (hosts may prefetch it)', async () => {
    const tools = ok(await modernRequest(on.url, 'tools/list')).tools as Listed[];
    expect(tools.map((tool) => tool.name).filter((name) => name.startsWith('operation_card'))).toEqual([]);
    const read = ok(await modernRequest(on.url, 'resources/read', { uri: CARD }));
    expect(read.contents[0].mimeType).toBe(MIME);
  });
});

describe('clients that declare MCP Apps', () => {
  const listTools = async (ask: () => Promise<RawResponse>) => ok(await ask()).tools as Listed[];
  const byName = (tools: Listed[]) => new Map(tools.map((tool) => [tool.name, tool]));

  it('a 2026-07-28 client: every async and hybrid tool links to the card with _meta.ui.resourceUri (and the flat ui/resourceUri); sync tools do not', async () => {
    const tools = byName(await listTools(() => modernRequest(on.url, 'tools/list', {}, { capabilities: { extensions: UI } })));
    expect(tools.get('job')?._meta).toEqual({ ui: { resourceUri: CARD }, 'ui/resourceUri': CARD });
    // A tool folder's own _meta is kept beside the link.
    expect(tools.get('suite')?._meta).toEqual({ team: 'qa', ui: { resourceUri: CARD }, 'ui/resourceUri': CARD });
    expect(tools.get('calc')?._meta).toBeUndefined();
  });

  it('the card tools are listed app-only: "Host MUST NOT include tools in the agent\'s tool list when their visibility does not include "model""', async () => {
    const tools = byName(await listTools(() => modernRequest(on.url, 'tools/list', {}, { capabilities: { extensions: UI } })));
    for (const name of ['operation_card_status', 'operation_card_answer', 'operation_card_cancel']) {
      expect(tools.get(name)?._meta).toEqual({ ui: { visibility: ['app'] } });
    }
  });

  it('a host without async support (handle tools) declaring it per request: the handle tools that name one operation link to the card too', async () => {
    const tools = byName(await listTools(() => legacyRequest(on.url, 'tools/list', {}, { version: '2025-06-18', capabilities: { extensions: UI } })));
    for (const name of ['job', 'suite', 'operation_status', 'operation_result', 'operation_cancel']) {
      expect((tools.get(name)?._meta?.ui as Record<string, unknown> | undefined)?.resourceUri).toBe(CARD);
    }
    expect(tools.get('operation_list')?._meta).toBeUndefined();
    expect(tools.get('calc')?._meta).toBeUndefined();
  });

  it('a Tasks extension client sees the same links on the tools its dialect lists', async () => {
    const capabilities = { extensions: { ...UI, 'io.modelcontextprotocol/tasks': {} } };
    const tools = byName(await listTools(() => modernRequest(on.url, 'tools/list', {}, { capabilities })));
    expect(tools.get('job')?._meta?.ui).toEqual({ resourceUri: CARD });
    expect(tools.has('operation_card_status')).toBe(true);
  });

  it('resources/list shows the card: uri, name and the MCP Apps MIME type', async () => {
    const listed = ok(await modernRequest(on.url, 'resources/list', {}, { capabilities: { extensions: UI } }));
    expect(listed.resources).toEqual([expect.objectContaining({ uri: CARD, name: 'operation_card', mimeType: MIME })]);
  });

  it('resources/read answers one HTML document with "mimeType MUST be text/html;profile=mcp-app" and a CSP that allows no domain', async () => {
    const read = ok(await modernRequest(on.url, 'resources/read', { uri: CARD }, { capabilities: { extensions: UI } }));
    expect(read.contents).toHaveLength(1);
    const [content] = read.contents;
    expect(content.uri).toBe(CARD);
    expect(content.mimeType).toBe(MIME);
    expect(content.text).toMatch(/^<!doctype html>/);
    expect(content._meta.ui.csp).toEqual({ connectDomains: [], resourceDomains: [], frameDomains: [], baseUriDomains: [] });
  });

  it('a 2025-06-18 host that declares MCP Apps only at initialize sees the card links on later requests of its session', async () => {
    const init = await legacyRequest(
      on.url,
      'initialize',
      { protocolVersion: '2025-06-18', capabilities: { extensions: UI }, clientInfo: { name: 'host', version: '1' } },
      { version: '2025-06-18', id: 1 },
    );
    const session = init.headers.get('mcp-session-id');
    expect(session).toBeTruthy();
    const tools = byName(
      await listTools(() => legacyRequest(on.url, 'tools/list', {}, { version: '2025-06-18', id: 2, headers: { 'mcp-session-id': session ?? '' } })),
    );
    expect(tools.get('job')?._meta?.ui).toEqual({ resourceUri: CARD });
    expect(tools.get('operation_status')?._meta?.ui).toEqual({ resourceUri: CARD });
  });

  it('with the card turned off, nothing links to it and it does not exist', async () => {
    const tools = await listTools(() => modernRequest(off.url, 'tools/list', {}, { capabilities: { extensions: UI } }));
    expect(tools.flatMap((tool) => (tool._meta ? [tool._meta] : []))).toEqual([{ team: 'qa' }]);
    const read = await modernRequest(off.url, 'resources/read', { uri: CARD }, { capabilities: { extensions: UI } });
    expect(read.message?.error?.code).toBe(-32602);
  });
});
