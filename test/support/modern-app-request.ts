/**
 * A 2026-07-28 JSON-RPC POST as `app.fetch` takes it, without a server: the standard headers
 * the body implies (Mcp-Method, and Mcp-Name from its taskId or name) beside the protocol
 * version, so a test states only the body and any header it adds or means to contradict.
 */
const REVISION = '2026-07-28';

export function modernAppRequest(body: unknown, headers: Record<string, string> = {}): Request {
  const message = body as { method?: string; params?: { taskId?: string; name?: string } };
  return new Request('http://127.0.0.1/mcp', {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': REVISION,
      ...(message.method ? { 'mcp-method': message.method } : {}),
      ...(message.params?.taskId || message.params?.name ? { 'mcp-name': message.params.taskId || message.params.name } : {}),
      ...headers,
    },
    body: JSON.stringify(body),
  });
}
