/**
 * An OAuth assembly (`-c oauthIssuer=… -c oauthAudience=…`) run as deployed: the Function URL is
 * NONE and the MCP function's bundle checks every bearer token against the issuer the
 * template names, so a request without one gets 401 with the metadata challenge, a token for
 * another audience is refused, and each subject owns its own tasks.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { startDevIssuer, type DevIssuer } from '../../../local/oauth/dev-issuer.ts';
import { deployedAssembly, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { modernRequest } from '../../support/raw-mcp.ts';
import { ok, pollUntilStatus, rpcError } from '../../support/rpc-assertions.ts';

/** The issuer's address is in the template, so it is fixed: a port unlikely to be taken. */
const ISSUER_PORT = 39_411;
const AUDIENCE = 'async-mcp-as-deployed';
const TASKS = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let issuer: DevIssuer;
let stack: DeployedLocalStack;

beforeAll(async () => {
  issuer = await startDevIssuer({ port: ISSUER_PORT, audience: AUDIENCE });
  const cdkOut = await deployedAssembly({ oauthIssuer: issuer.issuer, oauthAudience: AUDIENCE });
  ({ stack } = await startAssemblyStack(cdkOut));
}, 300_000);
afterAll(async () => {
  await stack?.close();
  await issuer?.close();
});

const bearer = async (sub: string, aud = AUDIENCE) => ({ authorization: `Bearer ${await issuer.mint({ sub, aud })}` });

describe('an OAuth assembly run as deployed', () => {
  it('the template makes the Function URL NONE: the function checks the tokens', () => {
    expect(stack.model.functionUrl?.authType).toBe('NONE');
  });

  it('a request without a token gets 401 with a WWW-Authenticate challenge naming the metadata', async () => {
    const response = await modernRequest(stack.url, 'tools/list');
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer .*resource_metadata=/);
  });

  it('a token for another audience gets 401', async () => {
    const response = await modernRequest(stack.url, 'tools/list', {}, { headers: await bearer('alice', 'https://other.example/mcp') });
    expect(response.status).toBe(401);
  });

  it("alice's task completes for her; bob is told it does not exist", async () => {
    const alice = await bearer('alice');
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 1000, seed: 1 } }, { capabilities: TASKS, headers: alice }),
    );
    const taskId = created.taskId as string;
    const done = await pollUntilStatus(() => modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers: alice }), ['completed'], {
      timeout: 60_000,
    });
    expect(done.result.structuredContent.count).toBe(1000);
    const foreign = rpcError(await modernRequest(stack.url, 'tasks/get', { taskId }, { capabilities: TASKS, headers: await bearer('bob') }));
    expect(foreign.code).toBe(-32602);
  });
});
