/** When the Events extension is served: the settings from the environment, events turned off, and a deployment without a shared log. */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createAsyncMcpApp, type EventsAppOptions } from '../../lambdas/app/async-mcp-app.ts';
import { InMemoryEventLog } from '../../lambdas/events/in-memory-event-log.ts';
import { eventsFromEnv } from '../../lambdas/handlers/environment.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { buildToolCatalog } from '../../lambdas/tools/tool-catalog.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';

const MODERN = '2026-07-28';

function app(events: EventsAppOptions | undefined, local: boolean) {
  return createAsyncMcpApp({
    store: new InMemoryRecordStore(),
    engine: new FakeWorkflowEngine(),
    catalog: buildToolCatalog([], () => 'arn:aws:states:us-east-1:000000000000:stateMachine:none'),
    secretKey: TEST_SECRET_KEY,
    logger: { error: () => undefined, warn: () => undefined },
    ...(events ? { events } : {}),
    ...(local ? { allowedHostnames: ['127.0.0.1'] } : {}),
  });
}

async function call(target: ReturnType<typeof app>, method: string) {
  const body = {
    jsonrpc: '2.0',
    id: 1,
    method,
    params: {
      _meta: {
        'io.modelcontextprotocol/protocolVersion': MODERN,
        'io.modelcontextprotocol/clientCapabilities': {},
        'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
      },
    },
  };
  const response = await target.fetch(
    new Request('http://127.0.0.1/mcp', {
      method: 'POST',
      headers: {
        host: '127.0.0.1',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': MODERN,
        'mcp-method': method,
      },
      body: JSON.stringify(body),
    }),
    'local',
  );
  const text = await response.text();
  const line = text.split('\n').find((l) => l.startsWith('data: '));
  return JSON.parse(line ? line.slice(6) : text);
}

describe('serving events/*', () => {
  it('serves them with a log, advertising both capability forms', async () => {
    const served = app({ log: new InMemoryEventLog() }, false);
    expect((await call(served, 'events/list')).result.events).toHaveLength(3);
    expect((await call(served, 'server/discover')).result.capabilities).toMatchObject({ events: {}, extensions: { 'io.modelcontextprotocol/events': {} } });
  });

  it('"with events turned off" answers -32601 and advertises nothing', async () => {
    const off = app({ enabled: false }, true);
    expect((await call(off, 'events/list')).error.code).toBe(-32601);
    const { capabilities } = (await call(off, 'server/discover')).result;
    expect(capabilities.events).toBeUndefined();
    expect(capabilities.extensions?.['io.modelcontextprotocol/events']).toBeUndefined();
  });

  it("a deployment that passes no shared log keeps events off rather than keeping them in one function's memory", async () => {
    expect((await call(app(undefined, false), 'events/list')).error.code).toBe(-32601);
    // The local server is one process: there the log in memory is the whole log.
    expect((await call(app(undefined, true), 'events/list')).result.events).toHaveLength(3);
  });
});

describe('eventsFromEnv', () => {
  afterEach(() => {
    vi.unstubAllEnvs();
  });

  it('is on with the defaults when nothing is set', () => {
    expect(eventsFromEnv()).toMatchObject({ enabled: true, retentionHours: 24, maxSubscriptionTtlSeconds: 3600 });
  });

  it('reads ASYNC_MCP_EVENTS=0, the retention and the longest TTL, and refuses what it cannot read', () => {
    vi.stubEnv('ASYNC_MCP_EVENTS', '0');
    vi.stubEnv('ASYNC_MCP_EVENTS_RETENTION_HOURS', '6');
    vi.stubEnv('ASYNC_MCP_EVENTS_MAX_TTL_SECONDS', '30');
    expect(eventsFromEnv()).toMatchObject({ enabled: false, retentionHours: 6, maxSubscriptionTtlSeconds: 30, minSubscriptionTtlSeconds: 30 });
    vi.stubEnv('ASYNC_MCP_EVENTS_MAX_TTL_SECONDS', '90000');
    expect(() => eventsFromEnv()).toThrow(/at most 86400/);
    vi.stubEnv('ASYNC_MCP_EVENTS_MAX_TTL_SECONDS', '60');
    vi.stubEnv('ASYNC_MCP_EVENTS', 'maybe');
    expect(() => eventsFromEnv()).toThrow(/ASYNC_MCP_EVENTS must be 1 or 0/);
  });
});
