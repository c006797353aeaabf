/**
 * The project's tools: the folders pass the checks `cdk synth` and `npm start` run, and each
 * tool answers a call through the local stack (`async-mcp start` on a free port), as an MCP
 * client that speaks the async dialects calls it. A new tool needs its example call in CALLS.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { join as joinCall, listTools, MemoryRequestStateStore, startToolCall } from 'async-mcp/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PROJECT = join(import.meta.dirname, '..');
const BIN = join(PROJECT, 'node_modules', 'async-mcp', 'bin', 'async-mcp.js');

/** One call per tool: its arguments and what its result's structuredContent holds. */
const CALLS: Record<string, { arguments: Record<string, unknown>; expected: Record<string, unknown> }> = {
  count_words: { arguments: { text: 'the quick brown fox' }, expected: { words: 4, longest: 'quick' } },
};

const TOOLS = readdirSync(join(PROJECT, 'state-machines'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

it('validate-tools passes every tool folder', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'validate-tools'], { cwd: PROJECT });
  expect(stdout).toContain('valid');
}, 60_000);

describe('each tool, called through the local stack', () => {
  let server: ChildProcess;
  let url: string;

  beforeAll(async () => {
    server = spawn(process.execPath, [BIN, 'start', '--port', '0'], { cwd: PROJECT, stdio: ['ignore', 'pipe', 'inherit'] });
    url = await new Promise<string>((resolve, reject) => {
      let output = '';
      server.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString();
        const serving = /serving MCP at (\S+)/.exec(output);
        if (serving?.[1]) resolve(serving[1]);
      });
      server.once('exit', (code) => reject(new Error(`async-mcp start exited with ${code}:\n${output}`)));
    });
  }, 120_000);

  afterAll(async () => {
    if (server.exitCode !== null) return;
    const exited = new Promise((resolve) => server.once('exit', resolve));
    server.kill('SIGTERM');
    await exited;
  });

  it('lists every tool folder', async () => {
    const listed = await listTools(url);
    expect(listed.map((tool) => tool.name).sort()).toEqual(expect.arrayContaining([...TOOLS].sort()));
  });

  it.each(TOOLS)('%s answers its example call', async (tool) => {
    const call = CALLS[tool];
    expect(call, `add an example call of ${tool} to CALLS in test/tools.test.ts`).toBeDefined();
    if (!call) return;
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(url, tool, call.arguments, { store });
    const result = await joinCall(handle, { store });
    expect(result?.structuredContent).toEqual(call.expected);
  }, 60_000);
});
