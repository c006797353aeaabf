/**
 * `npm start -- --watch` as a user runs it: a real process serving a small tools folder (a copy
 * in the repository's scratch directory, where `@aws/durable-execution-sdk-js` resolves as it
 * does for a project's tools), edited while it serves. Each save reloads the tools it touches in
 * the same process, told in one console line; a folder that no longer loads is reported and its
 * last good version keeps serving; a call started before an edit finishes with the old code.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const SCRATCH = resolve(import.meta.dirname, '../../.scratch');
const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };
const OBJECT = { type: 'object', properties: {}, additionalProperties: false };

const worker = (greeting: string) => `export const handler = async () => ({ greeting: '${greeting}' });\n`;
const durable = (version: string) => `import { type DurableContext, withDurableExecution } from '@aws/durable-execution-sdk-js';
export const handler = withDurableExecution(async (event: { arguments: { pauseSeconds?: number } }, context: DurableContext) => {
  const pause = event.arguments.pauseSeconds ?? 0;
  if (pause > 0) await context.wait('pause', { seconds: pause });
  return { version: '${version}' };
});
`;
const defined = (description: string, version: string) => `import { z } from 'zod';
import { defineTool } from 'async-mcp/durable';
export const handler = defineTool(
  {
    name: 'summed',
    description: '${description}',
    inputSchema: z.object({ numbers: z.array(z.number()).min(1) }),
    outputSchema: z.object({ sum: z.number(), version: z.string() }),
    invocation: 'sync',
  },
  async ({ numbers }) => ({ sum: numbers.reduce((a, b) => a + b, 0), version: '${version}' }),
);
`;
const greetTool = (name: string, invocation: 'sync' | 'both', workflowType: 'EXPRESS' | 'STANDARD') => ({
  name,
  description: `Greets (${name}).`,
  inputSchema: OBJECT,
  invocation,
  workflowType,
  pollIntervalSeconds: 1,
});

let dir: string;
let toolsDir: string;
let workersDir: string;
let server: { child: ChildProcess; exited: Promise<number | null>; stdout: () => string; stderr: () => string };
let url: URL;
let client: Client;

function write(path: string, text: string | object): void {
  const file = join(toolsDir, '..', path);
  mkdirSync(join(file, '..'), { recursive: true });
  writeFileSync(file, typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`);
}

/** Waits for the next console line (after `seen` lines of its kind) that matches `pattern`. */
async function nextLine(stream: 'stdout' | 'stderr', pattern: RegExp, seen: number): Promise<string> {
  return vi.waitFor(
    () => {
      const lines = server[stream]()
        .split('\n')
        .filter((line) => pattern.test(line));
      expect(lines.length).toBeGreaterThan(seen);
      return lines[seen] as string;
    },
    { timeout: 30_000, interval: 50 },
  );
}
const count = (stream: 'stdout' | 'stderr', pattern: RegExp) =>
  server[stream]()
    .split('\n')
    .filter((line) => pattern.test(line)).length;

/** Saves `path` and waits for the reload line it causes. */
async function saveAndReload(path: string, text: string | object, pattern: RegExp): Promise<string> {
  const seen = count('stdout', pattern);
  write(path, text);
  return nextLine('stdout', pattern, seen);
}

async function call(name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })).structuredContent;
}

beforeAll(async () => {
  mkdirSync(SCRATCH, { recursive: true });
  dir = mkdtempSync(join(SCRATCH, 'start-watch-'));
  toolsDir = join(dir, 'tools');
  workersDir = join(dir, 'workers');
  write('workers/greeter.ts', worker('hello'));
  write('tools/greet/tool.json', greetTool('greet', 'sync', 'EXPRESS'));
  write('tools/greet/definition.asl.json', { StartAt: 'Greet', States: { Greet: { Type: 'Task', Resource: '${Worker_greeter}', End: true } } });
  write('tools/slow_greet/tool.json', greetTool('slow_greet', 'both', 'STANDARD'));
  write('tools/slow_greet/definition.asl.json', {
    StartAt: 'Pause',
    States: { Pause: { Type: 'Wait', Seconds: 12, Next: 'Greet' }, Greet: { Type: 'Task', Resource: '${Worker_greeter}', End: true } },
  });
  write('tools/versioned/tool.json', {
    name: 'versioned',
    description: 'Answers its version, after an optional pause.',
    inputSchema: { type: 'object', properties: { pauseSeconds: { type: 'integer', minimum: 0 } }, additionalProperties: false },
    invocation: 'both',
    pollIntervalSeconds: 1,
  });
  write('tools/versioned/durable.ts', durable('v1'));
  write('tools/summed/durable.ts', defined('Adds numbers.', 'v1'));

  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--watch', '--port', '0', '--tools', toolsDir, '--workers', workersDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  server = { child, exited: new Promise((done) => child.on('exit', done)), stdout: () => stdout, stderr: () => stderr };
  await vi.waitFor(() => expect(stdout).toContain('Watching'), { timeout: 120_000, interval: 100 });
  url = new URL(stdout.match(/serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1] as string);
  client = new Client({ name: 'start-watch', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(url));
}, 150_000);

afterAll(async () => {
  await client?.close().catch(() => undefined);
  server?.child.kill('SIGTERM');
  await server?.exited;
  rmSync(dir, { recursive: true, force: true });
});

describe('npm start -- --watch', { timeout: 90_000 }, () => {
  it("says what it watches, and an edit to a worker's result changes the next call's result without a restart", async () => {
    expect(server.stdout()).toMatch(/Watching .*tools and .*workers: a saved change reloads the tools it touches/);
    expect(await call('greet')).toEqual({ greeting: 'hello' });
    // Both tools name the worker, so both reload.
    expect(await saveAndReload('workers/greeter.ts', worker('hi'), /^Reloaded /)).toBe('Reloaded greet, slow_greet');
    expect(await call('greet')).toEqual({ greeting: 'hi' });
    expect(server.child.exitCode).toBeNull();
    expect(server.stdout().match(/serving MCP at/g)).toHaveLength(1);
  });

  it("an edit to a durable.ts changes the next call's result without a restart", async () => {
    expect(await call('versioned')).toEqual({ version: 'v1' });
    expect(await saveAndReload('tools/versioned/durable.ts', durable('v2'), /^Reloaded /)).toBe('Reloaded versioned');
    expect(await call('versioned')).toEqual({ version: 'v2' });
  });

  it('an edit to a durable.ts defined with defineTool changes its listing and its next result', async () => {
    expect(await call('summed', { numbers: [1, 2] })).toEqual({ sum: 3, version: 'v1' });
    expect(await saveAndReload('tools/summed/durable.ts', defined('Adds numbers, twice as fast.', 'v2'), /^Reloaded /)).toBe('Reloaded summed');
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'summed')?.description).toBe('Adds numbers, twice as fast.');
    expect(await call('summed', { numbers: [1, 2] })).toEqual({ sum: 3, version: 'v2' });
  });

  it('a broken tool.json is reported with its file and reason, and the old tool still answers', async () => {
    const seen = count('stderr', /^Not reloaded: /);
    write('tools/greet/tool.json', '{ "name": "greet", ');
    const line = await nextLine('stderr', /^Not reloaded: /, seen);
    expect(line).toContain(`Not reloaded: ${join(toolsDir, 'greet', 'tool.json')}: not valid JSON at line 1`);
    expect(line).toContain('(greet keeps its last good version)');
    expect(await call('greet')).toEqual({ greeting: 'hi' });
    // Mended, it reloads again.
    expect(await saveAndReload('tools/greet/tool.json', { ...greetTool('greet', 'sync', 'EXPRESS'), title: 'Greet' }, /^Reloaded /)).toBe('Reloaded greet');
    const { tools } = await client.listTools();
    expect(tools.find((tool) => tool.name === 'greet')?.title).toBe('Greet');
  });

  it('a worker that no longer loads is reported with its file and reason, and the tools that name it keep their last good version', async () => {
    const seen = count('stderr', /^Not reloaded: /);
    write('workers/greeter.ts', 'export const handler = async () => ({ greeting: ');
    const line = await nextLine('stderr', /^Not reloaded: /, seen);
    expect(line).toContain(
      `Not reloaded: ${join(toolsDir, 'greet', 'definition.asl.json')}: worker module ${join(workersDir, 'greeter.ts')} cannot be loaded (`,
    );
    expect(line).toContain('(greet keeps its last good version)');
    expect(await call('greet')).toEqual({ greeting: 'hi' });
    expect(await saveAndReload('workers/greeter.ts', worker('hi'), /^Reloaded /)).toBe('Reloaded greet, slow_greet');
  });

  it('a new folder is served and a deleted one is no longer listed, without a restart', async () => {
    // Written aside and moved in whole, as a folder copied in would arrive.
    write('aside/added/tool.json', greetTool('added', 'sync', 'EXPRESS'));
    write('aside/added/definition.asl.json', { StartAt: 'Greet', States: { Greet: { Type: 'Task', Resource: '${Worker_greeter}', End: true } } });
    let seen = count('stdout', /^Reloaded added$/);
    renameSync(join(dir, 'aside', 'added'), join(toolsDir, 'added'));
    await nextLine('stdout', /^Reloaded added$/, seen);
    expect(await call('added')).toEqual({ greeting: 'hi' });
    seen = count('stdout', /^Removed added$/);
    rmSync(join(toolsDir, 'added'), { recursive: true });
    await nextLine('stdout', /^Removed added$/, seen);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).not.toContain('added');
  });

  it('a call started before an edit finishes with the code it started with, a state machine and a durable function alike', async () => {
    const machineRun = ok(await modernRequest(url, 'tools/call', { name: 'slow_greet', arguments: {} }, { capabilities: EXT }));
    const durableRun = ok(await modernRequest(url, 'tools/call', { name: 'versioned', arguments: { pauseSeconds: 10 } }, { capabilities: EXT }));
    await saveAndReload('workers/greeter.ts', worker('howdy'), /^Reloaded greet, slow_greet$/);
    await saveAndReload('tools/versioned/durable.ts', durable('v3'), /^Reloaded versioned$/);
    // Both were still running when their new code was in place (their pauses leave a busy machine time for both reloads).
    for (const run of [machineRun, durableRun]) {
      const status = ok(await modernRequest(url, 'tasks/get', { taskId: run.taskId }, { capabilities: EXT }));
      expect(status.status).toBe('working');
    }
    const poll = (taskId: string) =>
      pollUntilStatus(() => modernRequest(url, 'tasks/get', { taskId }, { capabilities: EXT }), ['completed', 'failed'], { timeout: 30_000 });
    expect((await poll(machineRun.taskId)).result.structuredContent).toEqual({ greeting: 'hi' });
    expect((await poll(durableRun.taskId)).result.structuredContent).toEqual({ version: 'v2' });
    // New calls run the new code.
    expect(await call('greet')).toEqual({ greeting: 'howdy' });
    expect(await call('versioned')).toEqual({ version: 'v3' });
  });
});
