/**
 * A 2025-11-25 client running a long tool as a task: the v1 SDK's experimental tasks.
 * Usage: npx tsx examples/legacy-tasks-client.ts [http://127.0.0.1:3000/mcp]
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

const url = new URL(process.argv[2] ?? 'http://127.0.0.1:3000/mcp');
const client = new Client({ name: 'legacy-tasks-example', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(url));
await client.listTools(); // tools carry execution.taskSupport; the SDK needs it before a task call

const stream = client.experimental.tasks.callToolStream({ name: 'analyze_dataset', arguments: { rows: 200000, seed: 42, delaySeconds: 1 } }, undefined, {
  task: { ttl: 3_600_000 },
});
for await (const message of stream) {
  if (message.type === 'taskCreated') console.log(`task ${message.task.taskId} created`);
  if (message.type === 'taskStatus') console.log(`status ${message.task.status}`);
  if (message.type === 'result') console.log(JSON.stringify(message.result));
  if (message.type === 'error') throw message.error;
}
await client.close();
