/**
 * A run that fails or times out is said in `npm start`'s console (issue 41: an InputPath typo
 * gave the client `States.Runtime … Invalid path '$.argumnets'` and the server logged nothing):
 * one line with the tool, the operation id, the error and the cause, never the arguments.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';

const TOOLS = join('test', 'fixtures', 'failed-run-tools');
/** An argument value that must never reach the console. */
const SECRET = 'arguments-stay-out-of-logs-4711';

describe('npm start with tools whose runs fail', { timeout: 180_000 }, () => {
  const server = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--port', '0', '--tools', TOOLS], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  server.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise((done) => server.on('exit', done));
  let client: Client;
  let url: URL;

  beforeAll(async () => {
    await vi.waitFor(() => expect(output).toMatch(/serving MCP at http/), { timeout: 120_000, interval: 50 });
    url = new URL(output.match(/serving MCP at (http:\/\/127\.0\.0\.1:\d+\/mcp)/)?.[1] ?? '');
    client = new Client({ name: 'failed-run-log', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(url));
  });
  afterAll(async () => {
    await client?.close();
    server.kill('SIGTERM');
    await exited;
  });

  function lineAbout(tool: string): string {
    return output.split('\n').find((line) => line.includes(`tool ${tool}`)) ?? '';
  }

  it('logs a failed operation: tool, operation id, error and cause, without its arguments', async () => {
    // A SEP-1391 call, as docs/clients.md's curl session makes it: the token is the operation id.
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'input_path_typo', arguments: { text: SECRET }, operation: { token: 'typo-run-1' } },
      }),
    });
    expect(response.ok).toBe(true);
    await response.text();
    await vi.waitFor(() => expect(lineAbout('input_path_typo')).not.toBe(''), { timeout: 30_000, interval: 50 });
    expect(lineAbout('input_path_typo')).toMatch(/^Run failed: tool input_path_typo, operation typo-run-1: States\.Runtime: Invalid path '\$\.argumnets'/);
    expect(output).not.toContain(SECRET);
  });

  it('logs a timed-out run the same way (an SDK client call: a task, named by its id)', async () => {
    await client.callTool({ name: 'times_out', arguments: { text: SECRET } }).catch((error: unknown) => error);
    await vi.waitFor(() => expect(lineAbout('times_out')).not.toBe(''), { timeout: 30_000, interval: 50 });
    expect(lineAbout('times_out')).toMatch(/^Run timed out: tool times_out, operation \S+: States\.Timeout/);
    expect(output).not.toContain(SECRET);
  });
});
