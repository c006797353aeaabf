/**
 * docs/tools.md "A tool in TypeScript", as a reader follows it: the page's durable.ts (defined
 * by defineTool, no tool.json), written into a tools directory of its own and nothing else, passes the loader's
 * checks and are served by the local stack, asynchronously (with its progress) and
 * synchronously. The folder sits in the repository's scratch directory, where a tool folder of
 * this repository lives (so `async-mcp/durable` resolves as it does under state-machines/).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inspectToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { type LocalStack, startLocalStack } from '../../local/local-stack.ts';
import { fileBlocks, page } from '../support/markdown-blocks.ts';
import { legacyRequest, modernRequest } from '../support/raw-mcp.ts';
import { ok, pollUntilStatus } from '../support/rpc-assertions.ts';

const SCRATCH = resolve(import.meta.dirname, '../../.scratch');
const WANTED = ['state-machines/count_lines/durable.ts'];
const EXT = { extensions: { 'io.modelcontextprotocol/tasks': {} } };

let toolsDir: string;
let stack: LocalStack | undefined;

beforeAll(() => {
  mkdirSync(SCRATCH, { recursive: true });
  toolsDir = mkdtempSync(join(SCRATCH, 'doc-durable-tools-'));
  const files = fileBlocks(page('docs/tools.md'));
  for (const path of WANTED) {
    const text = files.get(path);
    if (text === undefined) throw new Error(`docs/tools.md shows no ${path}`);
    const target = join(toolsDir, path.slice('state-machines/'.length));
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
});
afterAll(async () => {
  await stack?.close();
  rmSync(toolsDir, { recursive: true, force: true });
});

describe("the page's durable tool, written as the page shows it", () => {
  it('passes every check the loader runs (it compiles and exports handler)', async () => {
    const { folders, problems } = await inspectToolFolders(toolsDir);
    expect(problems.map((problem) => problem.message)).toEqual([]);
    expect(folders.map((folder) => [folder.config.name, folder.durable?.file])).toEqual([['count_lines', join(toolsDir, 'count_lines', 'durable.ts')]]);
  });

  it('is served by the local stack: a task waits, reports its progress and returns the counts', async () => {
    stack = await startLocalStack({ toolsDir, port: 0 });
    const created = ok(
      await modernRequest(stack.url, 'tools/call', { name: 'count_lines', arguments: { text: 'a\n\nb\nc', pauseSeconds: 1 } }, { capabilities: EXT }),
    );
    const done = await pollUntilStatus(
      () => modernRequest(stack!.url, 'tasks/get', { taskId: created.taskId }, { capabilities: EXT }),
      ['completed', 'failed'],
      {
        timeout: 20_000,
      },
    );
    expect(done.result).toMatchObject({ structuredContent: { lines: 4, nonEmpty: 3 }, content: [{ type: 'text', text: '4 lines, 3 not empty.' }] });
    expect(done._meta['async-mcp/progress']).toEqual({ progress: 1, total: 1, message: 'Counted 4 lines' });
  });

  it('answers a client without async support synchronously', async () => {
    const result = ok(await legacyRequest(stack!.url, 'tools/call', { name: 'count_lines', arguments: { text: 'one line' } }, { version: '2025-06-18' }));
    expect(result.structuredContent).toEqual({ lines: 1, nonEmpty: 1 });
  });
});
