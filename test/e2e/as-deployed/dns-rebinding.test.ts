/**
 * The as-deployed server takes any Host: a DNS-rebinding page (its own name resolving to
 * 127.0.0.1) could call tools through `npm start -- --as-deployed -c auth=none`. The local
 * Function URL refuses a foreign Host or Origin with 403, as `npm start` does, and serves
 * loopback names.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { legacyRequest, postWithHost } from '../../support/raw-mcp.ts';

let stack: DeployedLocalStack;

beforeAll(async () => {
  ({ stack } = await startAssemblyStack(await deployedAssembly(NO_AUTH)));
}, 240_000);
afterAll(async () => {
  await stack?.close();
});

const LIST_TOOLS = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

describe('the as-deployed server (auth=none) and DNS rebinding', () => {
  it('the as-deployed server refuses a foreign Host with 403, as npm start does', async () => {
    const response = await postWithHost(stack.url, `evil.example:${stack.url.port}`, LIST_TOOLS);
    expect(response.status).toBe(403);
    expect(JSON.parse(response.text).error).toMatchObject({ code: -32000, message: expect.stringContaining('evil.example') });
  });

  it('the as-deployed server refuses a foreign Origin with 403, as npm start does', async () => {
    const response = await legacyRequest(stack.url, 'tools/list', {}, { headers: { origin: 'http://evil.example' } });
    expect(response.status).toBe(403);
  });

  it('serves a loopback Host and a loopback Origin', async () => {
    for (const host of [`localhost:${stack.url.port}`, `127.0.0.1:${stack.url.port}`]) {
      expect((await postWithHost(stack.url, host, LIST_TOOLS)).status).toBe(200);
    }
    const response = await legacyRequest(stack.url, 'tools/list', {}, { headers: { origin: `http://localhost:${stack.url.port}` } });
    expect(response.status).toBe(200);
    expect(response.message?.result?.tools).toBeDefined();
  });
});
