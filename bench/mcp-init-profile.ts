/**
 * Where the MCP bundle's own module init goes, module by module. Builds the bundle as
 * bench/lambda-bundle.ts does (cdk/lambda-bundling.ts settings) but unminified, so each
 * bundled module keeps esbuild's `// path` comment, then in fresh processes:
 * - marks: a copy with a timestamp before each module's top-level code; the time up to the
 *   next mark is that module's init, the work it calls included (zod schemas built, say);
 * - profile: `--cpu-prof` of the plain bundle, self time by the module each sample ran in.
 * Medians over the runs, largest first. A garbage collection counts where it falls: the
 * scavenge V8 runs as a task when the event loop first gets control lands on the entry's first
 * `await` (`folders`), not on whoever allocated. Prints figures; asserts nothing.
 * Run alone with `npx tsx bench/mcp-init-profile.ts [RUNS] [ENTRY]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { esbuildOptions, FUNCTION_NODE_OPTIONS, lazyModuleOptions, lazyModulesOf } from '../cdk/lambda-bundling.ts';
import { REPO_ROOT } from '../cdk/repo-paths.ts';
import { ENV } from '../lambdas/handlers/environment.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../lambdas/tools/state-machine-names.ts';

/** The entry profiled: the MCP handler, or another (the reference server, say) given as the second argument. */
const ENTRY = process.argv[3] ?? 'lambdas/handlers/mcp-http.ts';
/** The tree built: this one, or another checkout (with `node_modules`) named by BENCH_TREE, to compare two. */
const SOURCE_ROOT = resolve(process.env.BENCH_TREE ?? REPO_ROOT);
const ENVIRONMENT: Record<string, string> = {
  [ENV.tableName]: 'bench',
  [ENV.resultsBucket]: 'bench-results',
  [ENV.secretArn]: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:bench',
  [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:000000000000:stateMachine:AsyncMcp-',
  // Durable-function tools are found by their prefix too.
  TOOL_DURABLE_FUNCTION_ARN_PREFIX: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-',
  [ENV.toolsDir]: resolve(REPO_ROOT, 'state-machines'),
};
const RUNTIME_GLOBAL = 'globalThis.awslambda = { streamifyResponse: (h) => h, HttpResponseStream: { from: (s) => s } };';
const MODULE_COMMENT = /^\/\/ (\S+\.(?:m?[jt]s|cjs|json))$/;

/** A bundled module's key: the file for ours, the package for npm's. */
function keyOf(path: string): string {
  return path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1] ?? path;
}

interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number } }[];
  samples: number[];
  timeDeltas: number[];
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? 0;
}

function run(args: string[], script: string, cwd: string): string {
  const env = { PATH: process.env.PATH ?? '', AWS_REGION: 'us-east-1', NODE_OPTIONS: FUNCTION_NODE_OPTIONS, NODE_NO_WARNINGS: '1', ...ENVIRONMENT };
  return execFileSync(process.execPath, [...args, '--input-type=module', '-e', script], { env, cwd, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
}

function printTop(title: string, perRun: Map<string, number>[], limit = 30): void {
  const keys = new Set(perRun.flatMap((sums) => [...sums.keys()]));
  const rows = [...keys].map((key) => [key, median(perRun.map((sums) => sums.get(key) ?? 0))] as const).sort((a, b) => b[1] - a[1]);
  const total = median(perRun.map((sums) => [...sums.values()].reduce((a, b) => a + b, 0)));
  console.log(`${title} (median of ${perRun.length} runs, total ${total.toFixed(1)} ms)`);
  for (const [key, ms] of rows.slice(0, limit)) {
    console.log(`  ${key.padEnd(64)} ${ms.toFixed(1).padStart(7)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%`);
  }
}

async function main(runs: number): Promise<void> {
  await mkdir(join(REPO_ROOT, 'node_modules/.cache'), { recursive: true });
  const dir = await mkdtemp(join(REPO_ROOT, 'node_modules/.cache/mcp-init-profile-'));
  try {
    const outfile = join(dir, 'index.mjs');
    const lazyModules = lazyModulesOf(ENTRY);
    // Unminified, the bundle keeps its own `createRequire` import, which the banner's would collide with.
    const banner = { js: "import { createRequire as bannerCreateRequire } from 'node:module'; const require = bannerCreateRequire(import.meta.url);" };
    await build({ ...esbuildOptions(ENTRY, outfile, SOURCE_ROOT, lazyModules), minify: false, banner });
    for (const name of lazyModules) await build(lazyModuleOptions(name, dir, SOURCE_ROOT));
    const lines = (await readFile(outfile, 'utf8')).split('\n');

    // Marks: one timestamp before each module's comment, in a copy beside the bundle.
    const marked = join(dir, 'marked.mjs');
    // A module's code can come in several pieces (an external's `require` first): each piece is
    // named by its order; the entry's own top-level statements get one mark each.
    const entryStart = lines.lastIndexOf(`// ${ENTRY}`);
    const seen = new Map<string, number>();
    const mark = (name: string) => `globalThis.__initMarks.push([${JSON.stringify(name)}, performance.now(), process.cpuUsage()]);`;
    const withMarks = lines.map((line, index) => {
      const path = line.match(MODULE_COMMENT)?.[1];
      if (path) {
        const piece = (seen.get(path) ?? 0) + 1;
        seen.set(path, piece);
        return `${mark(piece > 1 ? `${path} (piece ${piece})` : path)}\n${line}`;
      }
      const statement = index > entryStart ? line.match(/^var (\w+)/)?.[1] : undefined;
      return statement ? `${mark(`${ENTRY}: ${statement}`)}\n${line}` : line;
    });
    await writeFile(marked, `globalThis.__initMarks = [];\n${withMarks.join('\n')}`);
    const markRuns: Map<string, number>[] = [];
    const markCpuRuns: Map<string, number>[] = [];
    type Mark = [string, number, { user: number; system: number }];
    const cpuMs = ({ user, system }: Mark[2]) => (user + system) / 1000;
    for (let i = 0; i < runs; i++) {
      const script = `${RUNTIME_GLOBAL} const start = ['(start)', performance.now(), process.cpuUsage()];
        await import(${JSON.stringify(pathToFileURL(marked).href)});
        globalThis.__initMarks.push(['(end)', performance.now(), process.cpuUsage()]); console.log(JSON.stringify([start, ...globalThis.__initMarks]));`;
      const marks = JSON.parse(run([], script, dir)) as Mark[];
      const wall = new Map<string, number>();
      const cpu = new Map<string, number>();
      for (const [index, [path, at, usage]] of marks.entries()) {
        const next = marks[index + 1];
        if (!next) break;
        const name = path === '(start)' ? '(before the first module: compile, source map, banner)' : path;
        wall.set(name, (wall.get(name) ?? 0) + next[1] - at);
        cpu.set(name, (cpu.get(name) ?? 0) + cpuMs(next[2]) - cpuMs(usage));
      }
      markRuns.push(wall);
      markCpuRuns.push(cpu);
    }
    printTop('module init, wall ms between marks (the work each module calls included)', markRuns);
    printTop('module init, process cpu ms between marks', markCpuRuns);
    const byFolder = (sums: Map<string, number>) => {
      const folders = new Map<string, number>();
      for (const [name, ms] of sums) {
        const key = name.startsWith('lambdas/')
          ? name
              .split(/[/:]/)
              .slice(0, name.startsWith('lambdas/handlers/') ? 3 : 2)
              .join('/')
          : keyOf(name);
        folders.set(key, (folders.get(key) ?? 0) + ms);
      }
      return folders;
    };
    printTop('module init, process cpu ms between marks, by package or our folder', markCpuRuns.map(byFolder), 20);

    // Profiles: self time by the module whose lines a sample ran in.
    const starts: [number, string][] = [];
    for (const [index, line] of lines.entries()) {
      const path = line.match(MODULE_COMMENT)?.[1];
      if (path) starts.push([index, path]);
    }
    const owner = (line: number) => {
      let found = '(bundle prelude)';
      for (const [start, path] of starts) {
        if (start > line) break;
        found = path;
      }
      return found;
    };
    const profileDir = join(dir, 'profiles');
    const url = pathToFileURL(outfile).href;
    const selfRuns: [Map<string, number>, Map<string, number>][] = [];
    for (let i = 0; i < runs; i++) {
      await rm(profileDir, { recursive: true, force: true });
      run(['--cpu-prof', `--cpu-prof-dir=${profileDir}`], `${RUNTIME_GLOBAL} await import(${JSON.stringify(url)});`, dir);
      const [file] = await readdir(profileDir);
      if (!file) throw new Error('node wrote no profile');
      const profile = JSON.parse(await readFile(join(profileDir, file), 'utf8')) as CpuProfile;
      const keys = new Map(
        profile.nodes.map(({ id, callFrame }) => {
          if (callFrame.url === url) return [id, owner(callFrame.lineNumber)];
          if (!callFrame.url) return [id, callFrame.functionName.startsWith('(') ? callFrame.functionName : '(native)'];
          return [id, callFrame.url.startsWith('node:') ? 'node: internals' : keyOf(callFrame.url)];
        }),
      );
      const byFile = new Map<string, number>();
      const byPackage = new Map<string, number>();
      for (const [index, id] of profile.samples.entries()) {
        const ms = (profile.timeDeltas[index] ?? 0) / 1000;
        const key = keys.get(id) ?? '(unknown)';
        byFile.set(key, (byFile.get(key) ?? 0) + ms);
        const pkg = key.startsWith('lambdas/') ? key.split('/').slice(0, 2).join('/') : keyOf(key);
        byPackage.set(pkg, (byPackage.get(pkg) ?? 0) + ms);
      }
      selfRuns.push([byFile, byPackage]);
    }
    printTop(
      'profile self time by package or our folder',
      selfRuns.map(([, byPackage]) => byPackage),
      20,
    );
    printTop(
      'profile self time by file',
      selfRuns.map(([byFile]) => byFile),
      30,
    );
  } finally {
    // KEEP=1 leaves the bundles and the last profile for a closer look.
    if (process.env.KEEP === '1') console.log(`kept ${dir}`);
    else await rm(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main(Number(process.argv[2] ?? 5));
