/**
 * `npm run cli -- --help` in a clone: the usage lines are commands to copy, so they name the
 * CLI as the hints do (`npm run cli -- call …`), not the `async-mcp` bin a clone does not have
 * on its PATH.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usage } from '../../client/cli-args.ts';
import { cliEnv, runCli } from './support/cli-process.ts';

describe('cli --help', () => {
  let stateDir: string;
  beforeAll(async () => {
    stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-help-'));
  });
  afterAll(async () => {
    await rm(stateDir, { recursive: true, force: true });
  });

  it('in a clone, words every usage line as npm run cli -- …', async () => {
    const run = await runCli(['--help'], cliEnv(stateDir));
    expect(run.code).toBe(0);
    const commands = run.stdout.split('\n').filter((line) => /^ {2}\S/.test(line) && !line.trimStart().startsWith('--'));
    expect(commands).toContain('  npm run cli -- tools <url>');
    expect(commands.every((line) => line.startsWith('  npm run cli -- '))).toBe(true);
    expect(run.stdout).not.toMatch(/^ {2}async-mcp /m);
  });

  it('installed, words them as the bin', () => {
    expect(usage('async-mcp')).toContain('\n  async-mcp join <id> [--timeout 30s] [--answer [KEY=]VALUE ...]\n');
  });
});
