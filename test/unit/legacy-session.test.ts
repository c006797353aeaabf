/**
 * Initialize-era session ids that carry the client's declared capabilities, signed and
 * bound to the principal, so any instance reads them back and nothing is stored.
 */
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { checkSession, initializeCapabilities, mintSessionId, readSessionId, withSessionId } from '../../lambdas/mcp/input/legacy-session.ts';
import { TEST_SECRET_KEY } from '../support/core-harness.ts';

const OTHER_KEY = async () => new Uint8Array(32).fill(9);

function post(headers: Record<string, string>, body: unknown = { jsonrpc: '2.0', id: 1, method: 'tools/list' }) {
  return new Request('http://127.0.0.1/mcp', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
}

describe('session ids', () => {
  it('carry exactly the input capabilities and tasks declared, readable by any instance with the same secret', async () => {
    const declared = { elicitation: { form: {} }, sampling: {}, roots: { listChanged: true }, tasks: { list: {}, cancel: {} }, experimental: { x: {} } };
    const id = await mintSessionId(declared, 'owner', TEST_SECRET_KEY);
    expect(id).toMatch(/^[\x21-\x7e]+$/);
    expect(await readSessionId(id, 'owner', TEST_SECRET_KEY)).toEqual({
      elicitation: { form: {} },
      sampling: {},
      roots: { listChanged: true },
      tasks: { list: {}, cancel: {} },
    });
  });

  it('are minted for every client, so that a capability it did not declare (tasks) is known as undeclared', async () => {
    for (const declared of [{}, { experimental: {} }, undefined]) {
      expect(await readSessionId(await mintSessionId(declared, 'owner', TEST_SECRET_KEY), 'owner', TEST_SECRET_KEY)).toEqual({});
    }
  });

  it('minted before tasks were recorded (s1) still verify, and read as declaring tasks, so their clients keep their listing', async () => {
    const payload = Buffer.from(JSON.stringify({ c: { sampling: {} }, n: 'x' })).toString('base64url');
    const mac = createHmac('sha256', await TEST_SECRET_KEY())
      .update(`async-mcp session\nowner\n${payload}`)
      .digest('base64url');
    expect(await readSessionId(`s1.${payload}.${mac}`, 'owner', TEST_SECRET_KEY)).toEqual({ tasks: {}, sampling: {} });
  });

  it('differ for equal capabilities ("globally unique")', async () => {
    const [a, b] = await Promise.all([mintSessionId({ sampling: {} }, 'owner', TEST_SECRET_KEY), mintSessionId({ sampling: {} }, 'owner', TEST_SECRET_KEY)]);
    expect(a).not.toBe(b);
  });

  it('do not verify for another principal, under another secret, or once tampered with', async () => {
    const id = (await mintSessionId({ sampling: {} }, 'owner', TEST_SECRET_KEY))!;
    expect(await readSessionId(id, 'intruder', TEST_SECRET_KEY)).toBeUndefined();
    expect(await readSessionId(id, 'owner', OTHER_KEY)).toBeUndefined();
    const [version, payload, mac] = id.split('.');
    const forged = Buffer.from(JSON.stringify({ c: { sampling: {}, elicitation: {} }, n: 'x' })).toString('base64url');
    expect(await readSessionId(`${version}.${forged}.${mac}`, 'owner', TEST_SECRET_KEY)).toBeUndefined();
    expect(await readSessionId(`${version}.${payload}`, 'owner', TEST_SECRET_KEY)).toBeUndefined();
    expect(await readSessionId('anything', 'owner', TEST_SECRET_KEY)).toBeUndefined();
  });

  it('stay small whatever a client declares: large capabilities keep only their names', async () => {
    const id = (await mintSessionId({ sampling: { context: {}, tools: {}, junk: 'x'.repeat(5000) } }, 'owner', TEST_SECRET_KEY))!;
    expect(id.length).toBeLessThan(400);
    expect(await readSessionId(id, 'owner', TEST_SECRET_KEY)).toEqual({ sampling: { context: {}, tools: {}, junk: {} } });
  });
});

describe("checking a request's session", () => {
  it('a valid id gives its capabilities, and the header is taken off before the SDK sees it', async () => {
    const id = (await mintSessionId({ elicitation: {} }, 'owner', TEST_SECRET_KEY))!;
    const checked = await checkSession(post({ 'mcp-session-id': id }), undefined, 'owner', TEST_SECRET_KEY);
    expect(checked.ok && checked.capabilities).toEqual({ elicitation: {} });
    expect(checked.ok && checked.request.headers.get('mcp-session-id')).toBeNull();
    expect(checked.ok && (await checked.request.json())).toEqual({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  });

  it('an id that does not verify is HTTP 404, so the client initializes again', async () => {
    const checked = await checkSession(post({ 'mcp-session-id': 's1.bad.bad' }), undefined, 'owner', TEST_SECRET_KEY);
    expect(checked.ok).toBe(false);
    if (checked.ok) return;
    expect(checked.response.status).toBe(404);
    expect(await checked.response.json()).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
  });

  it('no header: nothing changes', async () => {
    const request = post({});
    expect(await checkSession(request, undefined, 'owner', TEST_SECRET_KEY)).toEqual({ ok: true, request });
  });

  it('an initialize starts a new session: whatever id it carries is ignored', async () => {
    const body = { jsonrpc: '2.0', id: 0, method: 'initialize', params: { capabilities: { sampling: {} } } };
    const checked = await checkSession(post({ 'mcp-session-id': 'stale' }, body), body, 'owner', TEST_SECRET_KEY);
    expect(checked.ok && checked.capabilities).toBeUndefined();
    expect(initializeCapabilities(body)).toEqual({ sampling: {} });
    expect(initializeCapabilities({ jsonrpc: '2.0', method: 'initialize' })).toBeUndefined();
  });

  it('the initialize answer carries the id only when it succeeded, so that undeclared capabilities are known too', async () => {
    const ok = new Response('x', { status: 200, headers: { 'content-type': 'text/event-stream' } });
    const withId = await withSessionId(ok, { roots: {} }, 'owner', TEST_SECRET_KEY);
    expect(await readSessionId(withId.headers.get('mcp-session-id')!, 'owner', TEST_SECRET_KEY)).toEqual({ roots: {} });
    expect(withId.headers.get('content-type')).toBe('text/event-stream');
    const declaredNothing = (await withSessionId(new Response('x'), {}, 'owner', TEST_SECRET_KEY)).headers.get('mcp-session-id');
    expect(await readSessionId(declaredNothing!, 'owner', TEST_SECRET_KEY)).toEqual({});
    expect((await withSessionId(new Response('x', { status: 400 }), { roots: {} }, 'owner', TEST_SECRET_KEY)).headers.get('mcp-session-id')).toBeNull();
  });
});
