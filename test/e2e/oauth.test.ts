/**
 * The local stack as an OAuth 2.1 resource server (MCP authorization): metadata first, a
 * valid bearer token on every request, and the token's subject as the principal that owns
 * operations across fresh tokens.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startDevIssuer, type DevIssuer } from '../../local/oauth/dev-issuer.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { captureLogs } from '../support/log-capture.ts';
import { modernRequest } from '../support/raw-mcp.ts';

let issuer: DevIssuer;
let stack: LocalStack;

beforeAll(async () => {
  issuer = await startDevIssuer();
  stack = await startTestStack({ oauth: { issuer: issuer.issuer }, waitTimeScale: 0.01 });
});

afterAll(async () => {
  await stack?.close();
  await issuer?.close();
});

const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const tokenFor = (sub: string) => issuer.mint({ sub, aud: stack.url.href });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

describe('OAuth resource server', () => {
  it('serves RFC 9728 protected-resource metadata naming the issuer, without a token', async () => {
    const response = await fetch(new URL('/.well-known/oauth-protected-resource/mcp', stack.url));
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ resource: stack.url.href, authorization_servers: [issuer.issuer], bearer_methods_supported: ['header'] });
  });

  it('a request without a token gets 401 with a WWW-Authenticate challenge naming the metadata', async () => {
    const response = await modernRequest(stack.url, 'tools/list');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata="[^"]*\/\.well-known\/oauth-protected-resource\/mcp"/);
  });

  it('a token for another audience gets 401 invalid_token', async () => {
    const logs = captureLogs('token rejected');
    const response = await modernRequest(
      stack.url,
      'tools/list',
      {},
      { headers: bearer(await issuer.mint({ sub: 'alice', aud: 'https://elsewhere.example/mcp' })) },
    );
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"');
    expect(logs.entries).toEqual([expect.objectContaining({ level: 'WARN', reason: expect.any(String) })]);
  });

  it('the same subject with a fresh token keeps its operations; another subject sees none of them', async () => {
    const started = await modernRequest(
      stack.url,
      'tools/call',
      { name: 'analyze_dataset', arguments: { rows: 1000, delaySeconds: 600 } },
      { capabilities: TASKS, headers: bearer(await tokenFor('alice')) },
    );
    expect(started.status).toBe(200);
    const taskId = started.message!.result.taskId as string;

    const again = await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers: bearer(await tokenFor('alice')) });
    expect(again.message!.result.taskId).toBe(taskId);

    const other = await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers: bearer(await tokenFor('bob')) });
    expect(other.message!.error?.code).toBe(-32602);

    await modernRequest(stack.url, 'tasks/cancel', { taskId }, { capabilities: TASKS, headers: bearer(await tokenFor('alice')) });
  });
});
