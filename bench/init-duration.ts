/**
 * Init Duration of the bundled MCP function in the as-deployed sandbox: the cloud assembly is
 * synthesized once (`-c auth=none`), then started `BENCH_INIT_RUNS` times, each start a fresh
 * sandbox whose first request pays the cold start. The figures are the local runner's REPORT
 * lines, as Lambda writes them: Init Duration (the sandbox's start-up and the bundle's module
 * init, `LocalFunction.coldStarts`, which also gives the import's part), the cold invocation's
 * Duration and a warm one's.
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
}

/** Synthesizes once, starts the assembly `runs` times, and prints the MCP function's REPORT figures. */
export async function printInitDuration(runs = Number(process.env.BENCH_INIT_RUNS ?? 5)): Promise<InitDurationFigures> {
  const figures: InitDurationFigures = { initMs: [], importMs: [], coldInvokeMs: [], warmInvokeMs: [] };
  const dir = await mkdtemp(join(tmpdir(), 'async-mcp-bench-init-'));
  try {
    await synthesizeAssembly({ outDir: dir, context: { auth: 'none' } });
    for (let i = 0; i < runs; i++) {
      const reports: { logicalId: string; durationMs: number; initMs?: number }[] = [];
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
        for (const { initDurationMs, handlerImportMs } of fn.coldStarts) {
          figures.initMs.push(initDurationMs);
          figures.importMs.push(handlerImportMs);
        }
        figures.coldInvokeMs.push(cold.durationMs);
        figures.warmInvokeMs.push(warm.durationMs);
      } finally {
        await stack.close();
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  for (const list of [figures.initMs, figures.importMs, figures.coldInvokeMs, figures.warmInvokeMs]) list.sort((a, b) => a - b);
  const at = (sorted: number[], q: number) => (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(0);
  const line = (label: string, sorted: number[]) =>
    console.log(`${label.padEnd(44)} n=${String(sorted.length).padEnd(5)} p50=${at(sorted, 0.5)}ms min=${at(sorted, 0)}ms max=${at(sorted, 1)}ms`);
  console.log('MCP function as deployed (npm start -- --as-deployed), its REPORT lines, one cold start per start');
  line('  Init Duration', figures.initMs);
  line("  of which the bundle's import (module init)", figures.importMs);
  line('  Duration, the cold tools/list', figures.coldInvokeMs);
  line('  Duration, the next (warm) tools/list', figures.warmInvokeMs);
  return figures;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await printInitDuration();
