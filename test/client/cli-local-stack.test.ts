/**
 * The `async-mcp` CLI as a subprocess against the local stack: call now, join later from
 * another process, with the exit codes scripts rely on.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import type { LocalStack } from '../../local/local-stack.ts';
import { startTestStack } from '../support/local-stack-fixture.ts';
import { cliEnv, lastJson, runCli, spawnCli } from './support/cli-process.ts';

let stack: LocalStack;
let stateDir: string;
let env: NodeJS.ProcessEnv;
let url: string;

beforeAll(async () => {
  stack = await startTestStack({ toolsDir: 'test/conformance/tools' });
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-'));
  env = cliEnv(stateDir);
  url = stack.url.href;
});
afterAll(async () => {
  await stack?.close();
  await rm(stateDir, { recursive: true, force: true });
});

const slow = (seconds: number) => ['-a', `seconds=${seconds}`, '-a', 'label=cli'];

describe('async-mcp CLI against the local stack', () => {
  it('call --detach prints the handle and exits 0 at once; join from a new process prints the CallToolResult', async () => {
    const detached = await runCli(['call', url, 'slow_compute', ...slow(1), '--detach', '--json'], env);
    expect(detached.code).toBe(0);
    const handle = lastJson(detached);
    expect(handle).toMatchObject({ id: expect.any(String), url, tool: 'slow_compute', dialect: 'tasks' });

    const joined = await runCli(['join', handle.id, '--json'], env);
    expect(joined.code).toBe(0);
    expect(lastJson(joined).structuredContent).toEqual({ seconds: 1, label: 'cli' });
  });

  it('a waiting call killed mid-wait is joined from a new process, which gets the result', async () => {
    // A state directory of its own, so the one handle in it is this call's.
    const ownDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-kill-'));
    onTestFinished(() => rm(ownDir, { recursive: true, force: true }));
    const ownEnv = cliEnv(ownDir);
    // Long enough that the call is still running when the handle is seen, however slowly the CLI starts.
    const waiting = spawnCli(['call', url, 'slow_compute', ...slow(6), '--json'], ownEnv);
    const exited = new Promise((resolve) => waiting.once('exit', resolve));
    // The handle is stored as soon as the server accepted the call (a CLI's start takes seconds on a busy machine).
    const file = await vi.waitFor(
      async () => {
        const added = (await readdir(ownDir).catch(() => [])).filter((name) => name.endsWith('.json'));
        expect(added).toHaveLength(1);
        return added[0]!;
      },
      { timeout: 45_000, interval: 50 },
    );
    waiting.kill('SIGKILL');
    await exited;

    const joined = await runCli(['join', file.replace(/\.json$/, ''), '--json'], ownEnv);
    expect(joined.code).toBe(0);
    expect(lastJson(joined).structuredContent).toEqual({ seconds: 6, label: 'cli' });
  }, 120_000);

  it('join --timeout 1s on a running call exits 3 and leaves the call running', async () => {
    const { id } = lastJson(await runCli(['call', url, 'slow_compute', ...slow(30), '--detach', '--json'], env));
    const joined = await runCli(['join', id, '--timeout', '1s', '--json'], env);
    expect(joined.code).toBe(3);
    expect(lastJson(joined)).toMatchObject({ id, state: 'working', timedOut: true });

    const status = await runCli(['status', id, '--json'], env);
    expect(status.code).toBe(0);
    expect(lastJson(status)).toMatchObject({ id, state: 'working' });
    await runCli(['cancel', id], env);
  });

  it('cancel stops a running call: status says cancelled and join exits 1', async () => {
    const { id } = lastJson(await runCli(['call', url, 'slow_compute', ...slow(30), '--detach', '--json', '--dialect', 'sep-1391'], env));
    const cancelled = await runCli(['cancel', id, '--json'], env);
    expect(cancelled.code).toBe(0);
    expect(lastJson(cancelled)).toMatchObject({ id, state: 'cancelled' });

    const joined = await runCli(['join', id, '--json'], env);
    expect(joined.code).toBe(1);
    expect(lastJson(joined)).toMatchObject({ id, state: 'cancelled', error: { message: expect.any(String) } });
  });

  it('a failing tool exits 1 and prints its isError result', async () => {
    const run = await runCli(['call', url, 'failing_job', '--json'], env);
    expect(run.code).toBe(1);
    expect(lastJson(run)).toMatchObject({ isError: true });
    expect(lastJson(run).content[0].text).toContain('JobFailed');
  });

  it('a blocking call of a sync tool prints the result in human form and exits 0', async () => {
    const run = await runCli(['call', url, 'greet', '-a', 'name=Ada'], env);
    expect(run).toMatchObject({ code: 0, stdout: 'Hello, Ada!\n' });
  });

  it('a plain call that ends removes its handle file: nothing is left to join, and list does not show it', async () => {
    const ownDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-ended-'));
    const ownEnv = cliEnv(ownDir);
    const runs = [
      await runCli(['call', url, 'greet', '-a', 'name=Ada'], ownEnv),
      await runCli(['call', url, 'slow_compute', ...slow(0), '--dialect', 'sep-1391'], ownEnv),
    ];
    const failed = await runCli(['call', url, 'failing_job'], ownEnv);
    const left = (await readdir(ownDir)).filter((name) => name.endsWith('.json'));
    const listed = lastJson(await runCli(['list', '--json'], ownEnv)) as unknown[];
    await rm(ownDir, { recursive: true, force: true });
    expect([...runs.map((r) => r.code), failed.code]).toEqual([0, 0, 1]);
    expect(left).toEqual([]);
    expect(listed).toEqual([]);
  });

  it('tools lists every tool with how it runs', async () => {
    const run = await runCli(['tools', url, '--json'], env);
    expect(run.code).toBe(0);
    const modes = Object.fromEntries((lastJson(run) as Array<{ name: string; mode: string }>).map((t) => [t.name, t.mode]));
    expect(modes).toMatchObject({ slow_compute: 'both', greet: 'sync', failing_job: 'async' });
  });

  it('usage errors exit 2: a missing operand, an unknown dialect, a bad duration, an unknown command', async () => {
    const runs = await Promise.all([
      runCli(['call', url], env),
      runCli(['call', url, 'greet', '--dialect', 'tasks-2099'], env),
      runCli(['join', 'x', '--timeout', 'soon'], env),
      runCli(['frobnicate'], env),
    ]);
    expect(runs.map((r) => r.code)).toEqual([2, 2, 2, 2]);
  });
});
