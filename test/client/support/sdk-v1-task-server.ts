/**
 * A server we did not write: @modelcontextprotocol/sdk 1.x with its InMemoryTaskStore,
 * speaking 2025-11-25 tasks only, stateful (sessions, tasks bound to the session that made
 * them), served by node:http on a free loopback port.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { InMemoryTaskMessageQueue, InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as z from 'zod/v4';

export interface SdkV1TaskServer {
  url: URL;
  /** Methods of the requests it received, in order. */
  methods: string[];
  close(): Promise<void>;
}

function newServer(taskStore: InMemoryTaskStore): McpServer {
  const server = new McpServer(
    { name: 'sdk-v1-task-server', version: '1.0.0' },
    { capabilities: { tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } } }, taskStore, taskMessageQueue: new InMemoryTaskMessageQueue() },
  );
  server.experimental.tasks.registerToolTask(
    'delay',
    { description: 'Waits ms milliseconds as a task, then reports it.', inputSchema: { ms: z.number() }, execution: { taskSupport: 'required' } },
    {
      async createTask({ ms }, { taskStore: store, taskRequestedTtl }) {
        const task = await store.createTask({ ttl: taskRequestedTtl ?? 60_000, pollInterval: 200 });
        setTimeout(() => {
          void store.storeTaskResult(task.taskId, 'completed', { content: [{ type: 'text', text: `waited ${ms} ms` }] }).catch(() => undefined);
        }, ms);
        return { task };
      },
      getTask: async (_args, { taskId, taskStore: store }) => store.getTask(taskId),
      getTaskResult: async (_args, { taskId, taskStore: store }) => (await store.getTaskResult(taskId)) as CallToolResult,
    },
  );
  server.registerTool('count', { description: 'Counts to n, reporting progress, synchronously.', inputSchema: { n: z.number() } }, async ({ n }, extra) => {
    const progressToken = extra._meta?.progressToken;
    for (let i = 1; i <= n; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      if (progressToken !== undefined) await extra.sendNotification({ method: 'notifications/progress', params: { progressToken, progress: i, total: n } });
    }
    return { content: [{ type: 'text', text: `counted to ${n}` }] };
  });
  return server;
}

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

export async function startSdkV1TaskServer(): Promise<SdkV1TaskServer> {
  const taskStore = new InMemoryTaskStore();
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const methods: string[] = [];
  const http = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const method = (body as { method?: unknown } | undefined)?.method;
      if (typeof method === 'string') methods.push(method);
      const sessionId = req.headers['mcp-session-id'];
      let transport = typeof sessionId === 'string' ? sessions.get(sessionId) : undefined;
      if (!transport) {
        if (method !== 'initialize') {
          res
            .writeHead(400, { 'content-type': 'application/json' })
            .end(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Bad Request: No valid session ID provided' } }));
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => void sessions.set(id, created),
        });
        transport = created;
        await newServer(taskStore).connect(created);
      }
      await transport.handleRequest(req, res, body);
    })().catch((error: unknown) => {
      if (!res.headersSent) res.writeHead(500).end(String(error));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    methods,
    async close() {
      taskStore.cleanup();
      await Promise.all([...sessions.values()].map((t) => t.close()));
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}
