/**
 * Against a server we did not write: @modelcontextprotocol/sdk 1.x with its InMemoryTaskStore
 * (2025-11-25 tasks only, stateful sessions). The CLI detaches in one process and joins in
 * another; under a pseudo-terminal it draws the live progress line.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join as joinCall, MemoryRequestStateStore, startToolCall, type FetchLike } from '../../client/index.ts';
import { renderProgressLine } from '../../client/progress-line.ts';
import { CLI, cliEnv, lastJson, runCli } from './support/cli-process.ts';
import { startSdkV1TaskServer, type SdkV1TaskServer } from './support/sdk-v1-task-server.ts';

let server: SdkV1TaskServer;
let stateDir: string;
let env: NodeJS.ProcessEnv;

beforeAll(async () => {
  server = await startSdkV1TaskServer();
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-v1-'));
  env = cliEnv(stateDir);
});
afterAll(async () => {
  await server?.close();
  await rm(stateDir, { recursive: true, force: true });
});

describe('an SDK 1.x server with InMemoryTaskStore', () => {
  it('the CLI picks 2025-11-25 tasks, detaches, and a new process joins the result in the same session', async () => {
    const detached = await runCli(['call', server.url.href, 'delay', '-a', 'ms=600', '--detach', '--json'], env);
    expect(detached.code).toBe(0);
    const handle = lastJson(detached);
    expect(handle).toMatchObject({ dialect: 'tasks-2025-11-25', sessionId: expect.any(String), protocolVersion: '2025-11-25' });

    const joined = await runCli(['join', handle.id, '--json'], env);
    expect(joined.code).toBe(0);
    expect(lastJson(joined).content).toEqual([{ type: 'text', text: 'waited 600 ms' }]);
  });

  it("join polls tasks/get at the server's pollInterval (200 ms here), not at the 1 s default", async () => {
    const store = new MemoryRequestStateStore();
    const polls: number[] = [];
    const counting: FetchLike = (input, init) => {
      if (typeof init.body === 'string' && init.body.includes('"tasks/get"')) polls.push(Date.now());
      return fetch(input, init);
    };
    const handle = await startToolCall(server.url, 'delay', { ms: 1000 }, { store });
    await joinCall(handle, { store, fetch: counting });
    expect(polls.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < polls.length; i++) expect(polls[i]! - polls[i - 1]!).toBeGreaterThanOrEqual(190);
  });

  it("on a TTY, call draws a live line: spinner, elapsed time, and a progress bar from the server's progress", async () => {
    // script(1) runs the CLI on a pseudo-terminal and copies everything it draws to stdout.
    const command = [process.execPath, ...CLI, 'call', server.url.href, 'count', '-a', 'n=4'].map((a) => `'${a}'`).join(' ');
    const output = await new Promise<{ code: number; text: string }>((resolve) => {
      execFile('script', ['-qefc', command, '/dev/null'], { env, timeout: 30_000 }, (error, stdout) => {
        resolve({ code: error ? Number(error.code) : 0, text: stdout });
      });
    });
    expect(output.code).toBe(0);
    const frames = output.text.split('\r\x1b[2K');
    expect(frames.some((f) => /^[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] \d+\.\ds count/.test(f))).toBe(true);
    expect(frames.some((f) => f.includes('[██████████░░░░░░░░░░] 50%'))).toBe(true);
    expect(frames.some((f) => f.includes('[████████████████████] 100%'))).toBe(true);
    // The line is cleared before the result is printed.
    expect(output.text).toContain('\r\x1b[2Kcounted to 4');
  });
});

describe('the progress line', () => {
  it('shows the state and message, and a bar only when progress has a total', () => {
    expect(renderProgressLine(0, 3200, 'job', { id: 'x', state: 'working', statusMessage: 'Crunching' })).toBe('⠋ 3.2s job working: Crunching');
    expect(renderProgressLine(1, 61_000, 'job', { id: 'x', state: 'working', progress: { progress: 1, total: 4 } })).toBe(
      '⠙ 1m01s job working [█████░░░░░░░░░░░░░░░] 25%',
    );
    expect(renderProgressLine(2, 0, 'job', { id: 'x', state: 'working', progress: { progress: 7 } })).toBe('⠹ 0.0s job working (7)');
    expect(renderProgressLine(0, 0, 'a-very-long-label', undefined, 12)).toHaveLength(11);
  });
});
