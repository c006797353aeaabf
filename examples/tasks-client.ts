/**
 * A 2026-07-28 client running a long tool as a task (the io.modelcontextprotocol/tasks
 * extension): the official v2 Client plus the ext-tasks session.
 * Usage: npx tsx examples/tasks-client.ts [http://127.0.0.1:3000/mcp]
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createTaskSessionFromClient, resultFromTaskOutcome } from '@modelcontextprotocol/ext-tasks/client';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:3000/mcp');
const clientInfo = { name: 'tasks-example', version: '1.0.0' };

// The session frames each request; this posts it with the 2026-07-28 headers.
async function rawDispatch(request: { id?: string | number; method: string; params?: Record<string, unknown> }) {
  const params = request.params ?? {};
  const name = [params.name, params.uri, params.taskId].find((v) => typeof v === 'string') as string | undefined;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': request.method,
      ...(name ? { 'mcp-name': name } : {}),
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: request.id ?? Date.now(), method: request.method, params }),
  });
  const text = await response.text();
  const message = JSON.parse(
    text.startsWith('{')
      ? text
      : (text
          .split('\n')
          .filter((l) => l.startsWith('data:'))
          .at(-1)
          ?.slice(5) ?? ''),
  );
  return message.error ? { kind: 'error' as const, error: message.error } : { kind: 'result' as const, result: message.result };
}

const client = new Client(clientInfo, { versionNegotiation: { mode: 'auto' } });
await client.connect(new StreamableHTTPClientTransport(url));
const session = createTaskSessionFromClient(client, {
  endpointId: url.href,
  rawDispatch: rawDispatch as never,
  v2RequestFraming: { protocolVersion: '2026-07-28', clientInfo, clientCapabilities: {} },
});

const execution = await session.callTool('analyze_dataset', { rows: 200000, seed: 42, delaySeconds: 1 });
console.log(`tools/call answered with kind "${execution.kind}"`);
const { outcome } = await execution.settle(); // polls tasks/get at the server's pollIntervalMs
console.log(JSON.stringify(resultFromTaskOutcome(outcome)));

await session.close();
await client.close();
