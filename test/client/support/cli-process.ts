/**
 * The `async-mcp` CLI as a subprocess, from the run's bundle of its sources
 * (test/support/cli-bundle), entered as a clone's `npm run cli` enters it (`client/cli.ts`, the
 * name the bundle gives itself), with its own state directory.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { CLI_BUNDLE } from '../../support/cli-bundle/bundle-path.ts';

const ROOT = resolve(import.meta.dirname, '../../..');
export const CLI = [CLI_BUNDLE];
/** The sources through tsx's loader, as `npm run cli` runs them: for the tests of that launcher itself. */
export const CLI_WITH_TSX = ['--import', 'tsx', resolve(ROOT, 'client/cli.ts')];

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** The environment of a CLI run: a state directory and nothing from the caller's AWS or token settings. */
export function cliEnv(stateDir: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { ASYNC_MCP_TOKEN: _token, ...env } = process.env;
  return { ...env, ASYNC_MCP_STATE_DIR: stateDir, NODE_NO_WARNINGS: '1', ...extra };
}

export function runCli(args: string[], env: NodeJS.ProcessEnv, entry: readonly string[] = CLI): Promise<CliRun> {
  return new Promise((resolvePromise) => {
    execFile(process.execPath, [...entry, ...args], { cwd: ROOT, env, timeout: 60_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
      resolvePromise({ code, stdout, stderr });
    });
  });
}

export function spawnCli(args: string[], env: NodeJS.ProcessEnv): ChildProcess {
  return spawn(process.execPath, [...CLI, ...args], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** What `--json` prints for a call, as far as the tests read it: the result, or the handle and its state. */
export interface CliJson {
  id: string;
  state?: string;
  timedOut?: boolean;
  isError?: boolean;
  content: [{ type: string; text: string }, ...Array<{ type: string; text: string }>];
  structuredContent: { count?: number; [key: string]: unknown };
  error: { message: string };
}

/** The last line of stdout as JSON: the `--json` contract (`T` for the commands that print lists). */
export function lastJson<T = CliJson>(run: CliRun): T {
  const lines = run.stdout.trim().split('\n');
  return JSON.parse(lines.at(-1) ?? '') as T;
}
