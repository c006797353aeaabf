/**
 * A SEP-1391 client in plain fetch: start with an operation token, poll
 * tools/async/status at the server's pollFrequency, then read tools/async/result.
 * Usage: npx tsx examples/sep-1391-client.ts [http://127.0.0.1:3000/mcp]
 */
import { randomUUID } from 'node:crypto';

const url = process.argv[2] ?? 'http://127.0.0.1:3000/mcp';
let id = 0;

async function rpc(method: string, params: Record<string, unknown>) {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: ++id, method, params }),
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
  if (message.error) throw new Error(`${method}: ${message.error.code} ${message.error.message}`);
  return message.result;
}

const token = randomUUID(); // ours to choose; reusing it for the same call is a safe retry
const started = await rpc('tools/call', {
  name: 'analyze_dataset',
  arguments: { rows: 200000, seed: 42, delaySeconds: 1 },
  operation: { token, keepAlive: 3600 },
});
console.log(started.content[0].text);

let status = started.operation.status;
while (!['completed', 'failed', 'canceled', 'unknown'].includes(status)) {
  await new Promise((resolve) => setTimeout(resolve, started.operation.pollFrequency * 1000));
  ({ status } = await rpc('tools/async/status', { token }));
  console.log(`status ${status}`);
}
const { result } = await rpc('tools/async/result', { token });
console.log(JSON.stringify(result));
