import { describe, expect, it } from 'vitest';
import { batchRefusal, exceedsDepth, guardRequestBody, MAX_BATCH_MESSAGES, MAX_BODY_BYTES, MAX_JSON_DEPTH } from '../../lambdas/mcp/edge/request-body-guard.ts';

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

function post(body: string | ReadableStream<Uint8Array>, headers: Record<string, string> = {}): Request {
  return new Request('http://localhost/mcp', {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    ...(typeof body === 'string' ? {} : { duplex: 'half' }),
  } as RequestInit);
}

async function refusal(request: Request) {
  const guarded = await guardRequestBody(request);
  if (guarded.ok) throw new Error('expected a refusal');
  return { status: guarded.response.status, body: (await guarded.response.json()) as { id: unknown; error: { code: number; message: string } } };
}

describe('JSON nesting depth', () => {
  it('counts arrays and objects, up to the bound and one past it', () => {
    expect(exceedsDepth(nested(MAX_JSON_DEPTH), MAX_JSON_DEPTH)).toBe(false);
    expect(exceedsDepth(nested(MAX_JSON_DEPTH + 1), MAX_JSON_DEPTH)).toBe(true);
    expect(exceedsDepth('{"a":{"b":[{"c":1}]}}', 3)).toBe(true);
    expect(exceedsDepth('{"a":{"b":[{"c":1}]}}', 4)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes included', () => {
    expect(exceedsDepth(JSON.stringify({ s: '[[[[[[{{{{' }), 1)).toBe(false);
    expect(exceedsDepth(JSON.stringify({ s: 'a\\"[[[["\\' }), 1)).toBe(false);
    // A quote escaped inside a string does not end it, so the brackets after the string still count.
    expect(exceedsDepth(JSON.stringify([{ s: '"]]' }, [[]]]), 2)).toBe(true);
  });

  it('scans a hostile megabyte of brackets in linear time, without recursion', () => {
    const hostile = '['.repeat(MAX_BODY_BYTES);
    const inStrings = JSON.stringify(['['.repeat(MAX_BODY_BYTES - 10)]);
    const started = performance.now();
    expect(exceedsDepth(hostile, MAX_JSON_DEPTH)).toBe(true);
    expect(exceedsDepth(inStrings, MAX_JSON_DEPTH)).toBe(false);
    expect(performance.now() - started).toBeLessThan(500);
  });

  it('refuses a body nested past the bound with HTTP 400 and -32600 naming the bound', async () => {
    const body = `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"deep":${nested(MAX_JSON_DEPTH)}}}}`;
    const { status, body: answer } = await refusal(post(body));
    expect(status).toBe(400);
    expect(answer).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: `Invalid Request: JSON nested deeper than ${MAX_JSON_DEPTH} levels` } });
  });
});

describe('JSON-RPC batches', () => {
  it('are refused from 2025-06-18 on, and for revisions we cannot date', () => {
    for (const version of ['2025-06-18', '2025-11-25', '2026-07-28', 'garbage']) {
      expect(batchRefusal(1, version)).toMatch(/batches are not supported in protocol revision .* \(removed in 2025-06-18\)/);
    }
  });

  it(`are served for 2025-03-26 and older, up to ${MAX_BATCH_MESSAGES} messages`, () => {
    for (const version of ['2025-03-26', '2024-11-05', '2024-10-07']) {
      expect(batchRefusal(MAX_BATCH_MESSAGES, version)).toBeUndefined();
      expect(batchRefusal(MAX_BATCH_MESSAGES + 1, version)).toBe(`Invalid Request: a JSON-RPC batch may hold at most ${MAX_BATCH_MESSAGES} messages`);
    }
  });

  it('"The initialize request MUST NOT be part of a JSON-RPC batch" (2025-03-26): one holding it is refused with HTTP 400 and -32600, not an internal error', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 98, method: 'initialize' },
      { jsonrpc: '2.0', id: 99, method: 'tools/list' },
    ]);
    const { status, body } = await refusal(post(batch, { 'mcp-protocol-version': '2025-03-26' }));
    expect(status).toBe(400);
    expect(body).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid Request: initialize must not be part of a JSON-RPC batch' } });
  });

  it('without a protocol version header are taken as 2025-03-26 ones', async () => {
    const batch = (n: number) => JSON.stringify(Array.from({ length: n }, (_, i) => ({ jsonrpc: '2.0', id: i, method: 'tools/list' })));
    const served = await guardRequestBody(post(batch(2)));
    expect(served).toMatchObject({ ok: true, batch: true });
    expect((await refusal(post(batch(MAX_BATCH_MESSAGES + 1)))).status).toBe(400);
  });
});

describe('request ids and sizes', () => {
  it('refuses a string id over 256 characters with HTTP 400 and -32600, before anything runs', async () => {
    const body = (id: string) => JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'x' } });
    expect(await guardRequestBody(post(body('i'.repeat(256))))).toMatchObject({ ok: true });
    const { status, body: answer } = await refusal(post(body('i'.repeat(257))));
    expect(status).toBe(400);
    expect(answer.error).toEqual({ code: -32600, message: 'Invalid Request: a request id must be at most 256 characters' });
  });

  it('refuses a long id inside a legacy batch as well', async () => {
    const batch = JSON.stringify([
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      { jsonrpc: '2.0', id: 'i'.repeat(300), method: 'tools/list' },
    ]);
    expect((await refusal(post(batch, { 'mcp-protocol-version': '2025-03-26' }))).status).toBe(400);
  });

  it('answers 413 for a declared length over the cap without reading the body', async () => {
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled++;
        controller.enqueue(new Uint8Array(1024));
      },
    });
    const { status, body } = await refusal(post(stream, { 'content-length': String(MAX_BODY_BYTES + 1) }));
    expect(status).toBe(413);
    expect(body.error.message).toBe(`Request body exceeds ${MAX_BODY_BYTES} bytes`);
    expect(pulled).toBeLessThanOrEqual(1);
  });

  it('stops reading a streamed body once it passes the cap', async () => {
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        sent += 64 * 1024;
        controller.enqueue(new Uint8Array(64 * 1024).fill(0x20));
      },
    });
    expect((await refusal(post(stream))).status).toBe(413);
    expect(sent).toBeLessThan(MAX_BODY_BYTES + 256 * 1024);
  });

  it('leaves malformed JSON to the SDK, which answers -32700', async () => {
    const guarded = await guardRequestBody(post('{"jsonrpc": "2.0", "id": 1, "method": '));
    expect(guarded).toMatchObject({ ok: true, batch: false });
    expect(guarded.ok && guarded.parsedBody).toBeUndefined();
  });
});

describe('initialize params', () => {
  const initialize = (params: unknown, id: unknown = 3) => JSON.stringify({ jsonrpc: '2.0', id, method: 'initialize', params });
  const valid = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'c', version: '1' } };

  it('a well-formed initialize goes on to the SDK, unknown fields and _meta included', async () => {
    expect(await guardRequestBody(post(initialize({ ...valid, _meta: { x: 1 }, extra: true })))).toMatchObject({ ok: true });
  });

  it('without protocolVersion: -32602 in band, for the request id, naming params.protocolVersion', async () => {
    const { protocolVersion: _, ...rest } = valid;
    const { status, body } = await refusal(post(initialize(rest, 'init-1')));
    expect(status).toBe(200);
    expect(body).toEqual({
      jsonrpc: '2.0',
      id: 'init-1',
      error: {
        code: -32602,
        message: 'Invalid params: params.protocolVersion: Invalid input: expected string, received undefined',
        data: { field: 'params.protocolVersion' },
      },
    });
  });

  it.each([
    ['a number for protocolVersion', { ...valid, protocolVersion: 20251125 }, 'params.protocolVersion'],
    ['no capabilities', { protocolVersion: '2025-11-25', clientInfo: valid.clientInfo }, 'params.capabilities'],
    ['no clientInfo', { protocolVersion: '2025-11-25', capabilities: {} }, 'params.clientInfo'],
    ['clientInfo without a version', { ...valid, clientInfo: { name: 'c' } }, 'params.clientInfo.version'],
    ['no params at all', undefined, 'params'],
    ['a string for capabilities.roots', { ...valid, capabilities: { roots: 'yes' } }, 'params.capabilities.roots'],
    ['a string for capabilities.elicitation', { ...valid, capabilities: { elicitation: 'x'.repeat(1000) } }, 'params.capabilities.elicitation'],
  ])('%s: -32602 naming %s, never the raw issue list', async (_what, params, field) => {
    const { body } = await refusal(post(initialize(params)));
    expect(body.error).toMatchObject({ code: -32602, data: { field } });
    expect(body.error.message).toMatch(/^Invalid params: /);
    expect(body.error.message).not.toContain('"path"');
  });

  it('a body that is not a JSON-RPC request (params a string) is left to the SDK, which refuses it with -32600', async () => {
    expect(await guardRequestBody(post(initialize('hello')))).toMatchObject({ ok: true });
  });

  it('an initialize with a 2026-07-28 header is left to the SDK, which refuses it before any handler', async () => {
    expect(await guardRequestBody(post(initialize({}), { 'mcp-protocol-version': '2026-07-28' }))).toMatchObject({ ok: true });
  });

  it('an initialize notification (no id) is left to the SDK: there is nobody to answer', async () => {
    expect(await guardRequestBody(post(JSON.stringify({ jsonrpc: '2.0', method: 'initialize', params: {} })))).toMatchObject({ ok: true });
  });
});
