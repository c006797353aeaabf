/**
 * The README's examples, read out of README.md and run as a reader pastes them (issue 28: the
 * SEP-1391 curl block failed when pasted, its result read before the 3-second job ended, and
 * `sh` could not parse it): the curl block with bash, the synchronous SDK client with tsx, the
 * startup listing it quotes, and the word_count tool it adds, against local stacks on free
 * loopback ports. The one change a test makes is the URL: the curl block reads `$URL`, and the
 * TypeScript example's `http://127.0.0.1:3000/mcp` becomes the stack's.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { inspect, promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { codeBlocks, page, writeWordCountExample, type CodeBlock } from '../support/markdown-blocks.ts';

const run = promisify(execFile);
const REPO = resolve(import.meta.dirname, '../..');
const README = page('README.md');
/** The address the README's examples use, which a reader's `npm start` serves. */
const README_URL = 'http://127.0.0.1:3000/mcp';

function blockWith(...needles: string[]): CodeBlock {
  const found = codeBlocks(README).filter((block) => needles.every((needle) => block.text.includes(needle)));
  expect(found, `one README block with ${needles.join(', ')}`).toHaveLength(1);
  return found[0]!;
}

/** The JSON-RPC messages in curl's output: plain JSON bodies and SSE `data:` lines alike. */
function messages(output: string): Array<{ result?: Record<string, unknown>; error?: unknown }> {
  return output
    .split('\n')
    .map((line) => line.replace(/^data: /, '').trim())
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line));
}

let scratch: string;
beforeAll(() => {
  // Under the repository, so the examples import this checkout's packages as a reader's would.
  mkdirSync(join(REPO, '.scratch'), { recursive: true });
  scratch = mkdtempSync(join(REPO, '.scratch', 'readme-'));
});
afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('README.md, against the repository tools', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startTestStack();
  });
  afterAll(async () => {
    await stack?.close();
  });

  it('the SEP-1391 curl block, pasted into bash, starts the analysis, polls until it is completed and reads its result', async () => {
    const block = blockWith('tools/async/status', 'tools/async/result');
    // It uses bash arrays: fenced `bash`, never `sh`.
    expect(block.lang).toBe('bash');
    const { stdout } = await run('bash', ['-c', block.text], { env: { ...process.env, URL: stack.url.href }, timeout: 120_000 });
    const answers = messages(stdout);
    expect(
      answers.filter((answer) => answer.error !== undefined),
      stdout,
    ).toEqual([]);
    expect(answers[0]?.result?.operation).toMatchObject({ status: 'working' });
    const result = answers.at(-1)?.result?.result as { structuredContent?: Record<string, number> } | undefined;
    expect(result?.structuredContent).toMatchObject({ count: 100_000, mean: expect.any(Number), stddev: expect.any(Number) });
  });

  it('the synchronous SDK example prints what its comment says', async () => {
    const block = blockWith("name: 'quick_calculation'", 'new Client(');
    const file = join(scratch, 'sync-client.ts');
    writeFileSync(file, block.text.replaceAll(README_URL, stack.url.href));
    const { stdout } = await run(join(REPO, 'node_modules', '.bin', 'tsx'), [file], { cwd: REPO, timeout: 60_000 });
    const comment = /\/\/ (\{.*\})\s*$/.exec(block.text)?.[1];
    expect(comment).toBeDefined();
    // The comment is the printed object, written as a literal: console.log prints it with util.inspect.
    const promised: unknown = new Function(`return (${comment});`)();
    expect(stdout.trim()).toBe(inspect(promised));
  });

  it('lists each tool as npm start prints it, with its invocation, workflow type and title', async () => {
    const listing = blockWith('async-mcp is serving MCP at').text;
    const rows = listing
      .split('\n')
      .map((line) => /^ {2}(\S+)\s+(sync|async|both)\s+(STANDARD|EXPRESS)\s+(.+)$/.exec(line))
      .filter((match) => match !== null)
      .map(([, name, invocation, workflowType, title]) => ({ name, invocation, workflowType, title }));
    expect(rows.length).toBeGreaterThan(0);
    const folders = await loadToolFolders(join(REPO, 'state-machines'));
    for (const { name, ...row } of rows) {
      const config = folders.find((folder) => folder.config.name === name)?.config;
      expect(config, name).toBeDefined();
      expect({ invocation: config?.invocation, workflowType: config?.workflowType, title: config?.title }, name).toEqual(row);
    }
    expect(listing).toContain(`serving MCP at ${README_URL}`);
  });
});

describe("docs/tools.md's fuller word_count", () => {
  it('passes the loader as written, with its worker', async () => {
    const dir = join(scratch, 'docs-word-count');
    writeWordCountExample('docs/tools.md', join(dir, 'tools'), join(dir, 'workers'));
    const [folder] = await loadToolFolders(join(dir, 'tools'));
    expect(folder?.config).toMatchObject({ name: 'word_count', title: 'Word count', invocation: 'both', outputSchema: { required: ['words'] } });
    expect(folder?.workers).toEqual(['count_words']);
  });
});

describe("README.md's word_count tool", () => {
  let stack: LocalStack;
  let client: Client;
  beforeAll(async () => {
    const toolsDir = join(scratch, 'tools');
    const workersDir = join(scratch, 'workers');
    writeWordCountExample('README.md', toolsDir, workersDir);
    stack = await startTestStack({ toolsDir, workersDir });
    client = new Client({ name: 'readme-word-count', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(stack.url));
  });
  afterAll(async () => {
    await client?.close();
    await stack?.close();
  });

  it('is served once the stack restarts with it, and a client without async support gets its count synchronously ("invocation": "both")', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('word_count');
    const result = await client.callTool({ name: 'word_count', arguments: { text: 'the quick  brown\nfox' } });
    expect(result.isError).toBeFalsy();
    expect(result.structuredContent).toEqual({ words: 4 });
  });
});
