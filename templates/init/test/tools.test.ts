/**
 * The project's tools: the folders pass the checks `cdk synth` and `npm start` run, and each
 * tool answers a call through the local stack, started in this process by async-mcp/testing
 * and called as an MCP client that speaks the async dialects calls it. A tool is called here,
 * from CALLS, or in a test of its own (test/<tool>.test.ts, which `npm run new-tool` writes).
 */
import { execFile } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startTestServer, type TestAnswers, type TestServer } from 'async-mcp/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const PROJECT = join(import.meta.dirname, '..');
const BIN = join(PROJECT, 'node_modules', 'async-mcp', 'bin', 'async-mcp.js');

/** One call per tool: its arguments, the answers to its questions, and what its result's structuredContent holds. */
const CALLS: Record<string, { arguments: Record<string, unknown>; answers?: TestAnswers; expected: Record<string, unknown> }> = {
  count_words: { arguments: { text: 'the quick brown fox' }, expected: { words: 4, longest: 'quick' } },
};

const TOOLS = readdirSync(join(PROJECT, 'state-machines'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

it('validate-tools passes every tool folder', async () => {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'validate-tools'], { cwd: PROJECT });
  expect(stdout).toContain('valid');
}, 60_000);

it.each(TOOLS)('%s is called here or in a test of its own', (tool) => {
  const tested = CALLS[tool] !== undefined || existsSync(join(PROJECT, 'test', `${tool}.test.ts`));
  expect(tested, `add an example call of ${tool} to CALLS in test/tools.test.ts, or write test/${tool}.test.ts`).toBe(true);
});

describe('each tool in CALLS, called through the local stack', () => {
  let server: TestServer;

  beforeAll(async () => {
    server = await startTestServer();
  }, 120_000);

  afterAll(async () => {
    await server?.close();
  });

  it('serves every tool folder', () => {
    expect([...server.tools].sort()).toEqual(expect.arrayContaining([...TOOLS].sort()));
  });

  it.each(Object.keys(CALLS))('%s answers its example call', async (tool) => {
    const call = CALLS[tool];
    if (!call) return;
    const run = await server.call(tool, call.arguments, call.answers ? { answers: call.answers } : {});
    expect(run.result.structuredContent).toEqual(call.expected);
  }, 60_000);
});
