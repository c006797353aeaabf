/**
 * Where one async start's CPU goes, for each dialect apart: our server (local stack, its own
 * process with `--starts`, dynalite in another) is started with `--cpu-prof` once per start
 * kind, warmed for BENCH_PROFILE_WARMUP seconds (3), then driven by BENCH_PROFILE_CONCURRENCY
 * (8) closed-loop clients for BENCH_PROFILE_SECONDS (10). Each profile is summed by the package
 * on the stack (cpu-profile-summary.ts `--by-caller`) over the measured seconds only, with the
 * CPU per start the process used over them. Prints figures; asserts nothing. Run alone with
 * `npx tsx bench/start-cpu-profile.ts [DIR]` (the profiles are kept in DIR when given).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { printSelfTime, timeByCallingPackage } from './cpu-profile-summary.ts';
import { runLoad, type LoadTarget } from './http-load.ts';
import { WAITING_RUN, type LocalServerReady } from './local-server-process.ts';
import { startChild } from './poll-throughput.ts';
import { legacyTaskStart, modernTaskStart, sepStart } from './start-throughput.ts';

const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 3);
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_PROFILE_CONCURRENCY ?? 8);

const KINDS: { label: string; target(url: URL): LoadTarget }[] = [
  { label: 'tools/call + task (2025-11-25)', target: (url) => legacyTaskStart(url, WAITING_RUN) },
  { label: 'tools/call, Tasks extension (2026-07-28)', target: modernTaskStart },
  { label: 'tools/call + operation (SEP-1391)', target: sepStart },
];

/** Profiles each kind of start in a server process of its own and prints where its CPU went. */
export async function printStartCpuProfiles(keepIn?: string): Promise<void> {
  const root = keepIn ?? (await mkdtemp(join(tmpdir(), 'start-cpu-profile-')));
  const previous = process.env.BENCH_CPU_PROF;
  const only = process.env.BENCH_PROFILE_ONLY;
  try {
    console.log(
      `Where a start's CPU goes: one server process per dialect, --cpu-prof, ${CONCURRENCY} closed-loop clients for ${SECONDS} s after ${WARMUP} s of warm-up (left out); time by the package on the stack:`,
    );
    for (const [index, kind] of KINDS.entries()) {
      if (only !== undefined && !kind.label.includes(only)) continue;
      const dir = join(root, String(index));
      process.env.BENCH_CPU_PROF = dir;
      const server = await startChild<LocalServerReady>('./local-server-process.ts', ['--starts']);
      try {
        const target = kind.target(new URL(server.ready.url));
        await runLoad(target, { concurrency: CONCURRENCY, seconds: WARMUP });
        // The profile keeps the child's clock: everything before this (start-up, warm-up) is left out.
        const skip = (await server.uptimeMs()) / 1000;
        const before = await server.cpuMs();
        const load = await runLoad(target, { concurrency: CONCURRENCY, seconds: SECONDS });
        const cpuMs = (await server.cpuMs()) - before;
        await server.close();
        const [file] = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
        if (!file) throw new Error(`no profile written in ${dir}`);
        console.log(`${kind.label}: ${load.ok} starts, ${(cpuMs / Math.max(1, load.ok)).toFixed(2)} ms cpu per start (process), profile ${join(dir, file)}`);
        printSelfTime(timeByCallingPackage(join(dir, file), skip), 22);
      } finally {
        await server.close();
      }
    }
  } finally {
    if (previous === undefined) delete process.env.BENCH_CPU_PROF;
    else process.env.BENCH_CPU_PROF = previous;
    if (!keepIn) await rm(root, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printStartCpuProfiles(process.argv[2]);
