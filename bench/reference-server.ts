/**
 * The reference the poll benchmark compares against: a stateless MCP server built with
 * `@modelcontextprotocol/sdk` 1.x the way its stateless example is (a fresh server and
 * transport per request), with the SDK's `InMemoryTaskStore` (2025-11-25 tasks), served by
 * node:http on 127.0.0.1. One task is created up front; `tasks/get` of it is what is timed.
 * The SDK 1.x speaks no 2026-07-28 wire, so this one server is the reference for both eras.
 * It answers in one of two ways, each its own reference: one JSON object
 * (`enableJsonResponse`, as our 2025-11-25 and 2026-07-28 `tasks/get` answer), or an SSE stream,
 * the transport's default (as our SEP-1391 `tools/async/status` answers).
 *
 * Run as a child process (fork this file, with `--sse` for the second): it reports
 * `{ url, taskId }` over IPC once it listens, and closes on a `{ close: true }` message or when
 * the IPC channel closes.
 */
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { InMemoryTaskStore } from '@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js';
import * as z from 'zod/v4';
import { answerBenchParent } from './bench-child.ts';

export interface ReferenceServer {
  url: URL;
  /** The task created up front (status `working`). */
  taskId: string;
  close(): Promise<void>;
}

/** What the child process reports once it listens. */
export interface ReferenceServerReady {
  url: string;
  taskId: string;
}

/** Starts the reference server in this process. */
export async function startReferenceServer(options: { port?: number; sse?: boolean } = {}): Promise<ReferenceServer> {
  const taskStore = new InMemoryTaskStore();
  const task = await taskStore.createTask({ ttl: 3_600_000, pollInterval: 2000 }, 'bench', {
    method: 'tools/call',
    params: { name: 'analyze_dataset', arguments: { rows: 10 } },
  });

  // As the SDK's stateless example: each request gets its own server and transport over the shared store.
  const serverFor = () => {
    const server = new McpServer({ name: 'reference', version: '1.0.0' }, { capabilities: { tasks: { requests: { tools: { call: {} } } } }, taskStore });
    server.experimental.tasks.registerToolTask(
      'analyze_dataset',
      { description: 'Analyses a synthetic dataset', inputSchema: { rows: z.number().int().min(1) } },
      {
        createTask: async (_args, extra) => ({ task: await extra.taskStore.createTask({ ttl: extra.taskRequestedTtl ?? 3_600_000 }) }),
        getTask: async (_args, extra) => {
          const task = await extra.taskStore.getTask(extra.taskId);
          if (!task) throw new Error(`no task ${extra.taskId}`);
          return task;
        },
        getTaskResult: async (_args, extra) => (await extra.taskStore.getTaskResult(extra.taskId)) as never,
      },
    );
    return server;
  };

  const http = createServer(async (req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const server = serverFor();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !options.sse });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, await readJson(req));
    } catch {
      if (!res.headersSent)
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}');
    }
  });
  http.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => http.listen(options.port ?? 0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return {
    url: new URL(`http://127.0.0.1:${port}/mcp`),
    taskId: task.taskId,
    close: async () => {
      taskStore.cleanup();
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
    },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8'));
}

if (process.send && import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const server = await startReferenceServer({ sse: process.argv.includes('--sse') });
  const stop = () => void server.close().then(() => process.exit(0));
  answerBenchParent(stop);
  process.send({ url: server.url.href, taskId: server.taskId } satisfies ReferenceServerReady);
}
