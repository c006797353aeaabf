/**
 * `npm start -- --as-deployed` synthesizes into a temporary folder and promises to remove it on
 * exit. A Ctrl-C reaches the whole process group (npm, its shell, tsx and the server), and npm
 * and tsx pass it on again, so the server sees the signal more than once; a SIGTERM to the group
 * may come while the synth still runs. The folder is gone once the group has ended, either way.
 */
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../../..');
const SYNTH_AND_START_MS = 600_000;

interface Started {
  pgid: number;
  output: () => string;
  /** The temporary folder the banner names, once printed. */
  folder: () => string | undefined;
}

const started: Started[] = [];

/** `npm start -- --as-deployed -c auth=none --port 0` in a process group of its own, as a terminal runs it. */
function startAsDeployed(): Started {
  const child = spawn('npm', ['start', '--', '--as-deployed', '-c', 'auth=none', '--port', '0'], {
    cwd: ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const run: Started = {
    pgid: child.pid!,
    output: () => output,
    folder: () => /Synthesizing the app into (\S+) /.exec(output)?.[1],
  };
  started.push(run);
  return run;
}

function entriesOf(folder: string | undefined): string[] {
  return folder && existsSync(folder) ? readdirSync(folder) : [];
}

function groupIsRunning(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits until no process of the group is left: npm, the shell, tsx and the server. */
async function groupEnded(run: Started): Promise<void> {
  await vi.waitFor(() => expect(groupIsRunning(run.pgid)).toBe(false), { timeout: 60_000, interval: 100 });
}

afterEach(() => {
  // A failed test must not leave a server or a folder behind.
  for (const run of started.splice(0)) {
    if (groupIsRunning(run.pgid)) process.kill(-run.pgid, 'SIGKILL');
    const folder = run.folder();
    if (folder) rmSync(folder, { recursive: true, force: true });
  }
});

describe('--as-deployed removes its temporary assembly', () => {
  it(
    'when Ctrl-C is pressed twice for the process group while it serves',
    async () => {
      const run = startAsDeployed();
      await vi.waitFor(() => expect(run.output()).toContain('async-mcp is serving MCP at'), { timeout: SYNTH_AND_START_MS, interval: 200 });
      const folder = run.folder()!;
      expect(existsSync(folder)).toBe(true);
      process.kill(-run.pgid, 'SIGINT');
      process.kill(-run.pgid, 'SIGINT');
      await groupEnded(run);
      expect(existsSync(folder)).toBe(false);
    },
    SYNTH_AND_START_MS + 120_000,
  );

  it('when the process group gets SIGTERM during the synth', async () => {
    const run = startAsDeployed();
    // Once cdk has written into the folder, the synth is under way.
    await vi.waitFor(() => expect(entriesOf(run.folder())).not.toEqual([]), { timeout: 120_000, interval: 100 });
    const folder = run.folder()!;
    process.kill(-run.pgid, 'SIGTERM');
    await groupEnded(run);
    expect(run.output()).not.toContain('async-mcp is serving MCP at');
    expect(existsSync(folder)).toBe(false);
  }, 180_000);
});
