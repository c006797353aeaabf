/**
 * A deploy never takes away finished work, on the local stack: operations finish, the
 * server stops, and it comes back on the same data (DynamoDB, executions, results) with a
 * tools folder in which the tool's outputSchema changed, then with one in which the tool is
 * gone. Every dialect, read through the project's client library and the v1 SDK Client,
 * still answers the result the operation finished with.
 */
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { join as joinPath } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join, MemoryRequestStateStore, startToolCall, status, type CallHandle } from '../../client/index.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { legacyRequest } from '../support/raw-mcp.ts';
import { rpcError } from '../support/rpc-assertions.ts';

const DIALECTS = ['tasks', 'tasks-2025-11-25', 'sep-1391'] as const;
const TOOL = 'run_test_suite';

let root: string;
let dataDir: string;
let port: number;
const handles = new Map<(typeof DIALECTS)[number], CallHandle>();

/** A copy of the shipped tools, edited by `change`. */
async function toolsFolder(name: string, change: (dir: string) => Promise<void>): Promise<string> {
  const dir = joinPath(root, name);
  await cp('state-machines', dir, { recursive: true });
  await change(dir);
  return dir;
}

/** Runs `read` against the stack started on the same port and data with `toolsDir`, then stops it. */
async function withStack<T>(toolsDir: string, read: (stack: LocalStack) => Promise<T>): Promise<T> {
  const stack = await startTestStack({ toolsDir, dataDir, port });
  try {
    return await read(stack);
  } finally {
    await stack.close();
  }
}

beforeAll(async () => {
  // Inside the project: a defineTool durable.ts is loaded, and its imports resolve from the project's node_modules.
  await mkdir(joinPath(import.meta.dirname, '../../.scratch'), { recursive: true });
  root = await mkdtemp(joinPath(import.meta.dirname, '../../.scratch/redeploy-'));
  dataDir = joinPath(root, 'data');
  const first = await startTestStack({ toolsDir: await toolsFolder('first', async () => undefined), dataDir });
  try {
    port = Number(first.url.port);
    for (const dialect of DIALECTS) {
      const store = new MemoryRequestStateStore();
      const handle = await startToolCall(first.url, TOOL, { suite: dialect, tests: 5, failures: 1, durationSeconds: 0 }, { store, dialect });
      handles.set(dialect, handle);
    }
    // Finished on the first deploy: polled until done, the result left on the server.
    for (const handle of handles.values()) {
      for (let polls = 0; (await status(handle, { store: new MemoryRequestStateStore() })).state !== 'completed'; polls++) {
        if (polls > 200) throw new Error(`${handle.dialect} did not complete`);
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    await first.close();
  }
}, 120_000);
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** What the operation finished with, read by the client library from a fresh state store (so from the server). */
function readResult(dialect: (typeof DIALECTS)[number]) {
  return join(handles.get(dialect)!, { store: new MemoryRequestStateStore(), timeoutMs: 10_000 });
}

const FINISHED = (suite: string) => ({ suite, passed: 4, failed: 1, durationSeconds: 0 });

describe("after a deploy that changes the tool's outputSchema", () => {
  it.each(DIALECTS)('%s: the finished result reads as it finished', async (dialect) => {
    const changed = await toolsFolder(`changed-${dialect}`, async (dir) => {
      const file = joinPath(dir, TOOL, 'tool.json');
      const tool = JSON.parse(await readFile(file, 'utf8'));
      tool.outputSchema.properties.score = { type: 'string' };
      tool.outputSchema.required.push('score');
      await writeFile(file, JSON.stringify(tool));
    });
    const result = await withStack(changed, () => readResult(dialect));
    expect(result?.isError).toBeUndefined();
    expect(result?.structuredContent).toEqual(FINISHED(dialect));
  });
});

describe('after a deploy that removes the tool', () => {
  let removed: string;
  beforeAll(async () => {
    removed = await toolsFolder('removed', (dir) => rm(joinPath(dir, TOOL), { recursive: true }));
  });

  it.each(DIALECTS)('%s: the finished result reads as it finished', async (dialect) => {
    const result = await withStack(removed, () => readResult(dialect));
    expect(result?.structuredContent).toEqual(FINISHED(dialect));
  });

  it('the v1 SDK Client still lists the task, gets it completed and reads its result; a new call is "Unknown tool"', async () => {
    const taskId = handles.get('tasks-2025-11-25')!.remoteId!;
    await withStack(removed, async (stack) => {
      const client = new Client({ name: 'e2e-redeploy', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(stack.url));
      try {
        const { tasks } = await client.experimental.tasks.listTasks();
        expect(tasks.map((task) => task.taskId)).toContain(taskId);
        expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ taskId, status: 'completed' });
        const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
        expect(result).toMatchObject({ structuredContent: FINISHED('tasks-2025-11-25') });
      } finally {
        await client.close();
      }
      const error = rpcError(
        await legacyRequest(stack.url, 'tools/call', { name: TOOL, arguments: { suite: 'x', tests: 1, failures: 0, durationSeconds: 0 }, task: {} }),
      );
      expect(error).toMatchObject({ code: -32602, message: `Unknown tool: ${TOOL}` });
    });
  });
});
