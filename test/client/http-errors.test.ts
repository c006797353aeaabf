/**
 * A server (or what stands before it, such as a Function URL) that answers with an HTTP error
 * and no JSON-RPC message is an error to the client library, never an empty success.
 */
import { describe, expect, it } from 'vitest';
import { listTools, McpRpcError } from '../../client/index.ts';

const forbidden = async () => new Response(JSON.stringify({ Message: 'Forbidden' }), { status: 403, headers: { 'content-type': 'application/json' } });

describe('an HTTP error without a JSON-RPC answer', () => {
  it('a Function URL\'s 403 {"Message":"Forbidden"} makes listTools reject with the HTTP status, not list no tools', async () => {
    const error = await listTools('https://example.invalid/mcp', { fetch: forbidden }).catch((thrown: unknown) => thrown);
    expect(error).toBeInstanceOf(McpRpcError);
    expect((error as McpRpcError).httpStatus).toBe(403);
    expect((error as McpRpcError).message).toContain('HTTP 403');
  });
});
