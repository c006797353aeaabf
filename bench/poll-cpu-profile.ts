/**
 * Where one poll's CPU goes, for each of the three polls apart: our server (local stack, its
 * own process, dynalite in another) is started with `--cpu-prof` once per poll kind, warmed for
 * BENCH_PROFILE_WARMUP seconds (3), then polled by BENCH_PROFILE_CONCURRENCY (8) closed-loop
 * pollers for BENCH_PROFILE_SECONDS (10); the reference (bench/reference-server.ts, JSON) the
 * same way with its 2025-11-25 `tasks/get`. Each profile is summed by the package on the stack
 * (cpu-profile-summary.ts `--by-caller`: a sample in Node's internals goes to the nearest
 * package) over the measured seconds only, with the CPU per poll each process used over them.
 * Prints figures; asserts nothing. Run alone with `npx tsx bench/poll-cpu-profile.ts [DIR]`
 * (the profiles are kept in DIR when given).
 */
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { timeByCallingPackage, printSelfTime } from './cpu-profile-summary.ts';
import { runLoad, type LoadTarget } from './http-load.ts';
import type { LocalServerReady } from './local-server-process.ts';
import { legacyTarget, modernTasksGet, startChild, type Child } from './poll-throughput.ts';
import type { ReferenceServerReady } from './reference-server.ts';

const WARMUP = Number(process.env.BENCH_PROFILE_WARMUP ?? 3);
const SECONDS = Number(process.env.BENCH_PROFILE_SECONDS ?? 10);
const CONCURRENCY = Number(process.env.BENCH_PROFILE_CONCURRENCY ?? 8);

interface Kind<T> {
  label: string;
  module: string;
  target(ready: T): LoadTarget;
}

const KINDS: (Kind<LocalServerReady> | Kind<ReferenceServerReady>)[] = [
  {
    label: 'ours, tasks/get (2025-11-25)',
    module: './local-server-process.ts',
    target: (r: LocalServerReady) => legacyTarget(new URL(r.url), 'tasks/get', { taskId: r.legacyTaskId }),
  },
  {
    label: 'ours, tasks/get (2026-07-28)',
    module: './local-server-process.ts',
    target: (r: LocalServerReady) => modernTasksGet(new URL(r.url), r.modernTaskId),
  },
  {
    label: 'ours, tools/async/status (SEP-1391)',
    module: './local-server-process.ts',
    target: (r: LocalServerReady) => legacyTarget(new URL(r.url), 'tools/async/status', { token: r.token }),
  },
  {
    label: 'reference (v1 SDK, JSON), tasks/get (2025-11-25)',
    module: './reference-server.ts',
    target: (r: ReferenceServerReady) => legacyTarget(new URL(r.url), 'tasks/get', { taskId: r.taskId }),
  },
];

export async function printPollCpuProfiles(keepIn?: string): Promise<void> {
  const root = keepIn ?? (await mkdtemp(join(tmpdir(), 'poll-cpu-profile-')));
  const previous = process.env.BENCH_CPU_PROF;
  try {
    console.log(
      `Where a poll's CPU goes: one server process per poll, --cpu-prof, ${CONCURRENCY} closed-loop pollers for ${SECONDS} s after ${WARMUP} s of warm-up (left out); time by the package on the stack:`,
    );
    for (const [index, kind] of KINDS.entries()) {
      const dir = join(root, String(index));
      process.env.BENCH_CPU_PROF = dir;
      const server: Child<unknown> = await startChild<unknown>(kind.module);
      let cpuMs = 0;
      let polls = 0;
      try {
        const target = (kind.target as (ready: unknown) => LoadTarget)(server.ready);
        await runLoad(target, { concurrency: CONCURRENCY, seconds: WARMUP });
        // The profile keeps the child's clock: everything before this (start-up, warm-up) is left out.
        const skip = (await server.uptimeMs()) / 1000;
        const before = await server.cpuMs();
        const load = await runLoad(target, { concurrency: CONCURRENCY, seconds: SECONDS });
        cpuMs = (await server.cpuMs()) - before;
        polls = load.ok;
        await server.close();
        const [file] = (await readdir(dir)).filter((name) => name.endsWith('.cpuprofile'));
        if (!file) throw new Error(`no profile written in ${dir}`);
        const profile = timeByCallingPackage(join(dir, file), skip);
        console.log(`${kind.label}: ${polls} polls, ${(cpuMs / Math.max(1, polls)).toFixed(2)} ms cpu per poll (process), profile ${join(dir, file)}`);
        printSelfTime(profile, 22);
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

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printPollCpuProfiles(process.argv[2]);
