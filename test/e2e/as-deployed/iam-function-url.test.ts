/**
 * The default assembly (an AWS_IAM Function URL), run as deployed: an unsigned request gets
 * AWS's 403 {"Message":"Forbidden"}; the v2 Client signing with the local credentials through
 * the client library's SigV4 fetch completes a tool, as the assumed-role caller.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sigV4Fetch } from '../../../client/index.ts';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, IAM_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';

let stack: DeployedLocalStack;

beforeAll(async () => {
  ({ stack } = await startAssemblyStack(await deployedAssembly(IAM_AUTH)));
}, 240_000);
afterAll(async () => {
  await stack?.close();
});

describe('an AWS_IAM Function URL from the assembly', () => {
  it('refuses an unsigned request with 403 {"Message":"Forbidden"}, as AWS answers', async () => {
    expect(stack.model.functionUrl?.authType).toBe('AWS_IAM');
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(response.status).toBe(403);
    expect(await response.json()).toEqual({ Message: 'Forbidden' });
  });

  it('serves a client that signs with SigV4 (service lambda, access key local) and completes quick_calculation', async () => {
    const signed = sigV4Fetch({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    const client = new Client({ name: 'as-deployed-iam', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(
      new StreamableHTTPClientTransport(stack.url, { fetch: ((input: string | URL, init: RequestInit = {}) => signed(String(input), init)) as typeof fetch }),
    );
    try {
      const result = (await client.callTool({ name: 'quick_calculation', arguments: { a: 2, b: 3, op: 'add' } })) as {
        structuredContent?: unknown;
        isError?: boolean;
      };
      expect(result.isError).toBeFalsy();
      expect(result.structuredContent).toEqual({ result: 5 });
    } finally {
      await client.close();
    }
  });
});
