/** `npm start` as a user runs it: a real process, its output and its exit code. */
import { spawn } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

function start(args: string[], env: NodeJS.ProcessEnv = process.env) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', ...args], { stdio: ['ignore', 'pipe', 'pipe'], env });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, exited, output: () => ({ stdout, stderr }) };
}

/** Waits until the server has printed `text` on stdout (a cold start on two busy cores takes a while). */
function printed(server: ReturnType<typeof start>, text: string) {
  return vi.waitFor(() => expect(server.output().stdout).toContain(text), { timeout: 120_000, interval: 50 });
}

describe('npm start', { timeout: 180_000 }, () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'startup-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('prints the URL and the tool list, and serves a real client', async () => {
    const server = start(['--port', '0']);
    try {
      await printed(server, 'run_test_suite');
      const { stdout } = server.output();
      const url = stdout.match(/serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1];
      expect(url).toBeDefined();
      expect(stdout).toMatch(/analyze_dataset\s+async\s+STANDARD/);
      expect(stdout).toMatch(/quick_calculation\s+sync\s+EXPRESS/);
      const client = new Client({ name: 'startup', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(url!)));
      const result = await client.callTool({ name: 'quick_calculation', arguments: { a: 2, b: 3, op: 'add' } });
      expect(result.structuredContent).toEqual({ result: 5 });
      await client.close();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('with --oauth-dev warns of nothing on Node 22 or 24, and on Node 20 prints one line saying what to upgrade and why', async () => {
    const { NODE_NO_WARNINGS: _quiet, AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: _sdk, ...env } = process.env;
    const server = start(['--port', '0', '--oauth-dev'], env);
    try {
      await printed(server, 'run_test_suite');
      const lines = server
        .output()
        .stderr.split('\n')
        .filter((line) => line.trim() !== '');
      if (Number(process.versions.node.split('.')[0]) >= 22) expect(lines).toEqual([]);
      else {
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(
          /^Node\.js 20\.\d+\.\d+ is past its end of life: upgrade to Node 22 or 24 \(the Lambda functions run on nodejs24\.x, and AWS SDK releases after early January 2027 need Node 22 or later\)\.$/,
        );
      }
      expect(server.output().stdout).not.toMatch(/WARNING|Warning/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('stops on an invalid tool folder, naming the file and the reason', async () => {
    await mkdir(join(dir, 'broken'), { recursive: true });
    await writeFile(
      join(dir, 'broken', 'tool.json'),
      JSON.stringify({ name: 'broken', description: 'x', inputSchema: { type: 'object' }, invocation: 'later' }),
    );
    await writeFile(join(dir, 'broken', 'definition.asl.json'), '{}');
    const server = start(['--port', '0', '--tools', dir]);
    expect(await server.exited).toBe(1);
    const { stderr } = server.output();
    expect(stderr).toContain(`Cannot start: Invalid tool folder: ${join(dir, 'broken', 'tool.json')}: invocation:`);
  });

  it('serves tools and workers kept outside the repository (--tools, --workers)', async () => {
    const tools = join(dir, 'own-tools');
    const workers = join(dir, 'own-workers');
    await mkdir(join(tools, 'shout'), { recursive: true });
    await mkdir(workers, { recursive: true });
    await writeFile(
      join(tools, 'shout', 'tool.json'),
      JSON.stringify({
        name: 'shout',
        description: 'Upper-cases a text',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
        invocation: 'sync',
      }),
    );
    await writeFile(
      join(tools, 'shout', 'definition.asl.json'),
      JSON.stringify({ StartAt: 'Shout', States: { Shout: { Type: 'Task', Resource: '${Worker_upper_case}', InputPath: '$.arguments', End: true } } }),
    );
    await writeFile(join(workers, 'upper-case.ts'), 'export async function handler(event: { text: string }) { return { text: event.text.toUpperCase() }; }\n');
    const server = start(['--port', '0', '--tools', tools, '--workers', workers]);
    try {
      await printed(server, 'shout');
      const url = server.output().stdout.match(/serving MCP at (\S+)/)![1]!;
      const client = new Client({ name: 'startup', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      expect((await client.callTool({ name: 'shout', arguments: { text: 'hi' } })).structuredContent).toEqual({ text: 'HI' });
      await client.close();
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('shows a tool without a title by its description in the tool list', async () => {
    const tools = join(dir, 'untitled-tools');
    await mkdir(join(tools, 'word_count'), { recursive: true });
    await writeFile(
      join(tools, 'word_count', 'tool.json'),
      JSON.stringify({
        name: 'word_count',
        description: 'Counts the words of a text',
        inputSchema: { type: 'object', properties: { text: { type: 'string' } } },
        invocation: 'both',
      }),
    );
    await writeFile(join(tools, 'word_count', 'definition.asl.json'), JSON.stringify({ StartAt: 'Done', States: { Done: { Type: 'Succeed' } } }));
    const server = start(['--port', '0', '--tools', tools]);
    try {
      await printed(server, 'word_count');
      await printed(server, 'Counts the words of a text');
      expect(server.output().stdout).toMatch(/word_count\s+both\s+STANDARD\s+Counts the words of a text\n/);
    } finally {
      server.child.kill('SIGTERM');
      await server.exited;
    }
  });

  it('names the missing worker module of a tool', async () => {
    const tools = join(dir, 'no-worker-tools');
    await mkdir(join(tools, 'lonely'), { recursive: true });
    await writeFile(
      join(tools, 'lonely', 'tool.json'),
      JSON.stringify({ name: 'lonely', description: 'x', inputSchema: { type: 'object' }, invocation: 'sync' }),
    );
    await writeFile(
      join(tools, 'lonely', 'definition.asl.json'),
      JSON.stringify({ StartAt: 'Work', States: { Work: { Type: 'Task', Resource: '${Worker_not_there}', End: true } } }),
    );
    const server = start(['--port', '0', '--tools', tools]);
    expect(await server.exited).toBe(1);
    expect(server.output().stderr).toMatch(/definition\.asl\.json: worker \$\{Worker_not_there\} has no module .*not-there\.ts/);
  });

  it('on a port already in use, says which port and how to pick another, and exits 1 without a stack trace', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const { port } = taken.address() as AddressInfo;
    try {
      const server = start(['--port', String(port)]);
      expect(await server.exited).toBe(1);
      const { stderr } = server.output();
      expect(stderr).toContain(`Cannot start: port ${port} on 127.0.0.1 is already in use`);
      expect(stderr).toMatch(/--port \d+/);
      expect(stderr).not.toMatch(/^\s+at /m);
    } finally {
      await new Promise((done) => taken.close(done));
    }
  });

  it('rejects unknown flags with the usage text', async () => {
    const server = start(['--prot', '3000']);
    expect(await server.exited).toBe(2);
    expect(server.output().stderr).toMatch(/Usage: npm start/);
  });
});
