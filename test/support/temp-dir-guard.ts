/**
 * vitest globalSetup: a test run leaves nothing in the temp dir. The run gets a temp dir of
 * its own (TMPDIR, which os.tmpdir() reads, inherited by the workers and what they spawn), so
 * other processes on the machine using the system temp dir cannot make the check pass or fail;
 * at the end, an entry with one of our prefixes still in it fails the run, naming it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';

/** Names our code and tests give temporary files and folders, and CDK's own outdir (`cdk.outXXXXXX`). */
export const OUR_TEMP_ENTRY = /^(async-mcp|cdk\.out)/;
/** Where the system temp dir is, for the caches meant to outlive a run (the synthesized test assemblies). */
export const SYSTEM_TMPDIR_ENV = 'ASYNC_MCP_SYSTEM_TMPDIR';

export default function setup(): () => void {
  const system = process.env[SYSTEM_TMPDIR_ENV] ?? tmpdir();
  const run = mkdtempSync(join(system, 'test-run-'));
  // tsx keeps its compile cache in the temp dir; sharing the system one keeps spawned processes' starts warm.
  const tsxCache = `tsx-${userInfo().uid}`;
  if (existsSync(join(system, tsxCache))) symlinkSync(join(system, tsxCache), join(run, tsxCache));
  const saved = { TMPDIR: process.env.TMPDIR, TEMP: process.env.TEMP, TMP: process.env.TMP };
  process.env[SYSTEM_TMPDIR_ENV] = system;
  process.env.TMPDIR = run;
  process.env.TEMP = run;
  process.env.TMP = run;
  return () => {
    const left = readdirSync(run).filter((name) => OUR_TEMP_ENTRY.test(name));
    rmSync(run, { recursive: true, force: true });
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
    if (left.length === 0) return;
    // vitest prints a teardown's error but exits 0: the exit code must say it too.
    process.once('exit', () => {
      process.exitCode = 1;
    });
    throw new Error(`The tests left ${left.length} entries in the temp dir (each test and synth must remove what it makes): ${left.sort().join(', ')}`);
  };
}
