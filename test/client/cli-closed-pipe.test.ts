/**
 * `async-mcp tools <url> | head -1`: the reader closes the pipe after the first line. The CLI
 * then ends quietly, as `ls` does (killed by SIGPIPE, which the shell reports as 141), not
 * with Node's "Unhandled 'error' event … write EPIPE" stack trace.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliEnv, spawnCli } from './support/cli-process.ts';

describe('a CLI whose stdout is closed by its reader', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-pipe-'));
  });
  afterAll(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('ends quietly with the status a closed pipe gives ls (141), printing no stack trace', async () => {
    const child = spawnCli(['--help'], cliEnv(stateDir));
    // The reader is gone before the CLI has started, so its first write meets a closed pipe.
    child.stdout?.destroy();
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((done) => child.on('close', (exitCode) => done(exitCode)));
    expect(stderr).toBe('');
    expect(code).toBe(141);
  });
});
