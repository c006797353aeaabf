/**
 * Where one async start's CPU goes, for each dialect apart: the local stack (its own process
 * with `--starts`, dynalite in another) and the MCP function served apart on it
 * (mcp-function-process.ts) are both started with `--cpu-prof` once per start kind, the
 * function warmed for BENCH_PROFILE_WARMUP seconds (3), then driven by
 * BENCH_PROFILE_CONCURRENCY (8) closed-loop clients for BENCH_PROFILE_SECONDS (10). Each
 * profile is summed over the measured seconds only (cpu-profile-summary.ts `--by-caller`): the
 * MCP function's by package and by our own modules, which is what it spends in AWS; the
 * stack's by package, which is what the local stand-ins (the Step Functions facade running
 * the execution, status sync, the EventBridge endpoint, the workers) spend beside it. Each
 * with the CPU per start its process used over those seconds. Prints figures; asserts
 * nothing. Run alone with `npx tsx bench/start-cpu-profile.ts [DIR]` (the profiles are kept
 * in DIR when given); BENCH_PROFILE_ONLY=2026 (say) profiles one dialect.
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { printSelfTime, timeByCallingPackage } from './cpu-profile-summary.ts';
import { runLoad, type LoadTarget } from './http-load.ts';
import { WAITING_RUN, type LocalServerReady } from './local-server-process.ts';
import type { McpFunctionReady } from './mcp-function-process.ts';
import { startChild, type Child } from './poll-throughput.ts';
import { legacyTaskStart, modernTaskStart, sepStart } from './start-throughput.ts';

const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 3);
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_PROFILE_CONCURRENCY ?? 8);

const KINDS: { label: string; target(url: URL): LoadTarget }[] = [
  { label: 'tools/call + task (2025-11-25)', target: (url) => legacyTaskStart(url, WAITING_RUN) },
  { label: 'tools/call, Tasks extension (2026-07-28)', target: modernTaskStart },
  { label: 'tools/call + operation (SEP-1391)', target: sepStart },
];

/** Starts a bench child writing its CPU profile into `dir` when it closes. */
async function profiled<T>(dir: string, relative: string, args: readonly string[]): Promise<Child<T>> {
  const previous = process.env.BENCH_CPU_PROF;
  process.env.BENCH_CPU_PROF = dir;
  try {
    return await startChild<T>(relative, args);
  } finally {
    if (previous === undefined) delete process.env.BENCH_CPU_PROF;
    else process.env.BENCH_CPU_PROF = previous;
  }
}

async function profileIn(dir: string): Promise<string> {
  const [file] = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile written in ${dir}`);
  return join(dir, file);
}

/** Profiles each kind of start with the MCP function apart from the stack and prints where each one's CPU went. */
export async function printStartCpuProfiles(keepIn?: string): Promise<void> {
  const root = keepIn ?? (await mkdtemp(join(tmpdir(), 'start-cpu-profile-')));
  const only = process.env.BENCH_PROFILE_ONLY;
  try {
    console.log(
      `Where a start's CPU goes: the MCP function in a process of its own on a local stack's stand-ins, both --cpu-prof, ${CONCURRENCY} closed-loop clients for ${SECONDS} s after ${WARMUP} s of warm-up (left out); time by the package on the stack:`,
    );
    for (const [index, kind] of KINDS.entries()) {
      if (only !== undefined && !kind.label.includes(only)) continue;
      const stackDir = join(root, `${index}-stack`);
      const functionDir = join(root, `${index}-function`);
      const stack = await profiled<LocalServerReady>(stackDir, './local-server-process.ts', ['--starts']);
      try {
        const server = await profiled<McpFunctionReady>(functionDir, './mcp-function-process.ts', [JSON.stringify(stack.ready.endpoints)]);
        try {
          const target = kind.target(new URL(server.ready.url));
          await runLoad(target, { concurrency: CONCURRENCY, seconds: WARMUP });
          // A profile keeps its process's clock: everything before this (start-up, warm-up) is left out.
          const [skip, stackSkip] = await Promise.all([server.uptimeMs(), stack.uptimeMs()]);
          const [before, stackBefore] = await Promise.all([server.cpuMs(), stack.cpuMs()]);
          const load = await runLoad(target, { concurrency: CONCURRENCY, seconds: SECONDS });
          const [after, stackAfter] = await Promise.all([server.cpuMs(), stack.cpuMs()]);
          await Promise.all([server.close(), stack.close()]);
          const perStart = (ms: number) => (ms / Math.max(1, load.ok)).toFixed(2);
          console.log(
            `${kind.label}: ${load.ok} starts; MCP function ${perStart(after - before)} ms cpu per start, the stack's stand-ins ${perStart(stackAfter - stackBefore)} ms (processes)`,
          );
          const functionProfile = await profileIn(functionDir);
          console.log(`  MCP function, by package (${functionProfile}):`);
          printSelfTime(timeByCallingPackage(functionProfile, skip / 1000), 22);
          console.log('  MCP function, our own code by module:');
          const ours = timeByCallingPackage(functionProfile, skip / 1000, true);
          printSelfTime({ total: ours.total, parts: ours.parts.filter(([key]) => /^(lambdas|local|bench)\//.test(key)) }, 22);
          const stackProfile = await profileIn(stackDir);
          console.log(`  the stack's process (stand-ins), by package (${stackProfile}):`);
          printSelfTime(timeByCallingPackage(stackProfile, stackSkip / 1000), 16);
        } finally {
          await server.close();
        }
      } finally {
        await stack.close();
      }
    }
  } finally {
    if (!keepIn) await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printStartCpuProfiles(process.argv[2]);
