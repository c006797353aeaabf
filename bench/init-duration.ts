/**
 * Init Duration of the bundled MCP function in the as-deployed sandbox: the cloud assembly is
 * synthesized once (`-c auth=none`), then started `BENCH_INIT_RUNS` times, each start a fresh
 * sandbox whose first request pays the cold start. The figures are the local runner's REPORT
 * lines, as Lambda writes them: Init Duration (the sandbox's start-up and the bundle's module
 * init, `LocalFunction.coldStarts`, which also gives the import's part), the cold invocation's
 * Duration and a warm one's. Then a task is started (warm) and polled by two `tasks/get` at
 * once, so that one of them lands on a new sandbox: that cold poll's Duration is what a
 * cold start's first poll pays past the Init Duration (the signer, and whatever the module
 * init leaves to the first request), beside a warm poll's.
 * A worker thread with the runner's module hooks is not Lambda's runtime, and this machine is
 * not Lambda's: compare runs on one machine, and the import figures of `--only=bundle`.
 * Run alone with `npx tsx bench/init-duration.ts`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startDeployedStack, synthesizeAssembly } from '../local/as-deployed/index.ts';
import { legacyRequest } from '../test/support/raw-mcp.ts';

const REPORT = /^\[(\S+)\] REPORT RequestId: \S+\tDuration: ([\d.]+) ms\t.*?(?:\tInit Duration: ([\d.]+) ms)?$/;

/** What the runs measured, in milliseconds, each list sorted. */
export interface InitDurationFigures {
  initMs: number[];
  /** Of the Init Duration, the bundle's import (module init); the rest is the sandbox's start-up. */
  importMs: number[];
  coldInvokeMs: number[];
  warmInvokeMs: number[];
  /** The first tasks/get of a new sandbox (its Init Duration apart), and a warm one's. */
  coldPollMs: number[];
  warmPollMs: number[];
}

/** Synthesizes once, starts the assembly `runs` times, and prints the MCP function's REPORT figures. */
export async function printInitDuration(runs = Number(process.env.BENCH_INIT_RUNS ?? 5)): Promise<InitDurationFigures> {
  const figures: InitDurationFigures = { initMs: [], importMs: [], coldInvokeMs: [], warmInvokeMs: [], coldPollMs: [], warmPollMs: [] };
  const dir = await mkdtemp(join(tmpdir(), 'async-mcp-bench-init-'));
  try {
    await synthesizeAssembly({ outDir: dir, context: { auth: 'none' } });
    for (let i = 0; i < runs; i++) {
      const reports: Report[] = [];
      const stack = await startDeployedStack({
        cdkOut: dir,
        port: 0,
        log: (line) => {
          const match = REPORT.exec(line);
          if (match?.[1] && match[2]) reports.push({ logicalId: match[1], durationMs: Number(match[2]), ...(match[3] ? { initMs: Number(match[3]) } : {}) });
        },
      });
      try {
        const mcp = stack.model.functionUrl?.targetFunctionLogicalId;
        const fn = mcp === undefined ? undefined : stack.functions.get(mcp);
        if (!mcp || !fn) throw new Error('the assembly has no Function URL in front of a function');
        for (let request = 0; request < 2; request++) {
          const listed = await legacyRequest(stack.url, 'tools/list');
          if (!listed.message || !('result' in listed.message)) throw new Error(`tools/list failed: ${listed.text.slice(0, 200)}`);
        }
        const [cold, warm] = reports.filter(({ logicalId }) => logicalId === mcp);
        if (!cold || !warm || cold.initMs === undefined) throw new Error(`no cold and warm REPORT lines of ${mcp}`);
        const [first] = fn.coldStarts;
        if (!first) throw new Error(`no cold start of ${mcp}`);
        figures.initMs.push(first.initDurationMs);
        figures.importMs.push(first.handlerImportMs);
        figures.coldInvokeMs.push(cold.durationMs);
        figures.warmInvokeMs.push(warm.durationMs);
        const polls = await coldAndWarmPoll(stack.url, () => reports.filter(({ logicalId }) => logicalId === mcp));
        figures.coldPollMs.push(polls.coldMs);
        figures.warmPollMs.push(polls.warmMs);
      } finally {
        await stack.close();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const { initMs, importMs, coldInvokeMs, warmInvokeMs, coldPollMs, warmPollMs } = figures;
  for (const list of [initMs, importMs, coldInvokeMs, warmInvokeMs, coldPollMs, warmPollMs]) list.sort((a, b) => a - b);
  const at = (sorted: number[], q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(0);
  const line = (label: string, sorted: number[]) =>
    console.log(`${label.padEnd(44)} n=${String(sorted.length).padEnd(5)} p50=${at(sorted, 0.5)}ms min=${at(sorted, 0)}ms max=${at(sorted, 1)}ms`);
  console.log('MCP function as deployed (npm start -- --as-deployed), its REPORT lines, one cold start per start');
  line('  Init Duration', figures.initMs);
  line("  of which the bundle's import (module init)", figures.importMs);
  line('  Duration, the cold tools/list', figures.coldInvokeMs);
  line('  Duration, the next (warm) tools/list', figures.warmInvokeMs);
  line("  Duration, a new sandbox's first tasks/get", figures.coldPollMs);
  line('  Duration, a warm tasks/get', figures.warmPollMs);
  return figures;
}

type Report = { logicalId: string; durationMs: number; initMs?: number };

/**
 * Starts a task and lets it finish, then sends two tasks/get of it at once: the warm sandbox takes one, and the
 * other starts a new one (tried again if both found it warm). The REPORT lines of the pair
 * give the cold poll's Duration (the one with an Init Duration) and the warm one's.
 */
async function coldAndWarmPoll(url: URL, reportsOfMcp: () => Report[]): Promise<{ coldMs: number; warmMs: number }> {
  const started = await legacyRequest(url, 'tools/call', { name: 'analyze_dataset', arguments: { rows: 10 }, task: { ttl: 600_000 } });
  const taskId = (started.message as { result?: { task?: { taskId?: string } } } | undefined)?.result?.task?.taskId;
  if (!taskId) throw new Error(`the task did not start: ${started.text.slice(0, 200)}`);
  // The run's worker and status-sync functions start cold too: the pair waits until they are done.
  for (let polls = 0; ; polls++) {
    const polled = await legacyRequest(url, 'tasks/get', { taskId });
    const status = (polled.message as { result?: { status?: string } } | undefined)?.result?.status;
    if (status !== 'working') break;
    if (polls === 120) throw new Error('the task is still working after a minute');
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  for (let attempt = 0; attempt < 5; attempt++) {
    const before = reportsOfMcp().length;
    const polled = await Promise.all([legacyRequest(url, 'tasks/get', { taskId }), legacyRequest(url, 'tasks/get', { taskId })]);
    for (const poll of polled) if (!poll.message || !('result' in poll.message)) throw new Error(`tasks/get failed: ${poll.text.slice(0, 200)}`);
    const pair = reportsOfMcp().slice(before);
    const cold = pair.find(({ initMs }) => initMs !== undefined);
    const warm = pair.find(({ initMs }) => initMs === undefined);
    if (cold && warm) return { coldMs: cold.durationMs, warmMs: warm.durationMs };
  }
  throw new Error('no tasks/get landed on a new sandbox');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printInitDuration();
