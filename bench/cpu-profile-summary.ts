/**
 * Self time of a `node --cpu-prof` profile by package: each sample goes to the npm package,
 * our source folder, Node internals or V8's own entries ((garbage collector), (program)).
 * A bundle built unminified keeps esbuild's `// path` comment before each module, which is
 * how a sample in a bundle is traced to its package without a source map.
 * Run alone with `npx tsx bench/cpu-profile-summary.ts [--by-caller [--by-module]] PROFILE.cpuprofile [SECONDS_TO_SKIP]`
 * (`--by-module`: our own code by file, not by folder).
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self milliseconds per package, largest first, and the profile's total. */
export function selfTimeByPackage(profilePath: string, afterSeconds = 0): { total: number; parts: [string, number][] } {
  return selfTime(profilePath, (frame) => keyFor(frame), afterSeconds);
}

/**
 * The same, but a sample in Node's internals or native code (a socket write, a hash, a
 * promise hook) goes to the nearest package or source folder on its stack, the code that
 * asked for the work; one with none on its stack stays where it ran. Idle time is left out.
 */
export function timeByCallingPackage(profilePath: string, afterSeconds = 0, ourModules = false): { total: number; parts: [string, number][] } {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  const parents = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);
  // ourModules: our own code by file (lambdas/aws/hot-get-item.ts) instead of by folder.
  const ownKey = new Map(profile.nodes.map((node) => [node.id, keyFor(node.callFrame, ourModules ? 4 : 2)]));
  const borrowed = (key: string) => key === 'node: internals' || key === '(native)';
  const keys = new Map<number, string>();
  for (const node of profile.nodes) {
    const own = ownKey.get(node.id) ?? '(unknown)';
    let key = own;
    for (let up = parents.get(node.id); borrowed(key) && up !== undefined; up = parents.get(up)) {
      const candidate = ownKey.get(up) ?? '(unknown)';
      if (!borrowed(candidate) && !candidate.startsWith('(')) key = candidate;
    }
    keys.set(node.id, key);
  }
  const summed = sumSamples(profile, keys, afterSeconds);
  const parts = summed.parts.filter(([key]) => key !== '(idle)');
  return { total: parts.reduce((sum, [, ms]) => sum + ms, 0), parts };
}

/** `afterSeconds` leaves out the process's start (a server's catalog load, say): the steady state is what a request costs. */
function selfTime(profilePath: string, keyOf: (frame: ProfileNode['callFrame']) => string, afterSeconds = 0): { total: number; parts: [string, number][] } {
  const profile = JSON.parse(readFileSync(profilePath, 'utf8')) as CpuProfile;
  return sumSamples(profile, new Map(profile.nodes.map((node) => [node.id, keyOf(node.callFrame)])), afterSeconds);
}

function sumSamples(profile: CpuProfile, keys: Map<number, string>, afterSeconds: number): { total: number; parts: [string, number][] } {
  const sums = new Map<string, number>();
  let total = 0;
  let elapsed = 0;
  for (const [index, id] of profile.samples.entries()) {
    const ms = (profile.timeDeltas[index] ?? 0) / 1000;
    elapsed += ms;
    if (elapsed < afterSeconds * 1000) continue;
    const key = keys.get(id) ?? '(unknown)';
    sums.set(key, (sums.get(key) ?? 0) + ms);
    total += ms;
  }
  return { total, parts: [...sums].sort((x, y) => y[1] - x[1]) };
}

function keyFor({ functionName, url }: ProfileNode['callFrame'], depth = 2): string {
  if (!url) return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node: internals';
  const path = url.startsWith('file:') ? fileURLToPath(url) : url;
  const inPackage = packageOf(path);
  if (inPackage) return inPackage;
  return path
    .replace(/^.*?\/(lambdas|local|bench|cdk|client)\//, '$1/')
    .split('/')
    .slice(0, depth)
    .join('/');
}

function packageOf(path: string): string | undefined {
  return path.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/)?.[1];
}

/** A sample's package in an unminified bundle, from the nearest `// path` comment above its line. */
export function bundleLineOwner(bundlePath: string): (line: number) => string {
  const starts: [number, string][] = [];
  for (const [index, line] of readFileSync(bundlePath, 'utf8').split('\n').entries()) {
    const match = line.match(/^\/\/ (\S+\.(?:m?[jt]s|cjs|json))$/);
    if (match?.[1]) starts.push([index, packageOf(match[1]) ?? match[1].split('/').slice(0, 2).join('/')]);
  }
  return (line) => {
    let owner = '(bundle prelude)';
    for (const [start, name] of starts) {
      if (start > line) break;
      owner = name;
    }
    return owner;
  };
}

/** Self time of a profile of a bundle built unminified, by the package each sample ran in. */
export function bundleSelfTime(profilePath: string, bundlePath: string): { total: number; parts: [string, number][] } {
  const owner = bundleLineOwner(bundlePath);
  const bundleUrl = pathToFileURL(bundlePath).href;
  return selfTime(profilePath, (frame) => (frame.url === bundleUrl ? owner(frame.lineNumber) : keyFor(frame)));
}

/** One line per part above 0.5% of the total. */
export function printSelfTime({ total, parts }: { total: number; parts: [string, number][] }, limit = 25): void {
  for (const [key, ms] of parts.slice(0, limit)) {
    if (ms / total < 0.005) break;
    console.log(`  ${key.padEnd(44)} ${ms.toFixed(0).padStart(6)} ms ${((100 * ms) / total).toFixed(1).padStart(5)}%`);
  }
  console.log(`  ${'total'.padEnd(44)} ${total.toFixed(0).padStart(6)} ms`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const byCaller = process.argv.includes('--by-caller');
  const byModule = process.argv.includes('--by-module');
  const [profile, second] = process.argv.slice(2).filter((arg) => !arg.startsWith('--by-'));
  if (!profile) throw new Error('usage: cpu-profile-summary.ts [--by-caller] PROFILE.cpuprofile [UNMINIFIED_BUNDLE.mjs | SECONDS_TO_SKIP]');
  const skip = Number(second);
  if (second && Number.isNaN(skip)) printSelfTime(bundleSelfTime(profile, second));
  else printSelfTime(byCaller ? timeByCallingPackage(profile, skip || 0, byModule) : selfTimeByPackage(profile, skip || 0));
}
