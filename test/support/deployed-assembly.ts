/**
 * Cloud assemblies for the as-deployed tests, synthesized once per source state: each variant
 * (`auth=none`, the default IAM one, or any context) is synthesized into a temporary folder
 * keyed by a hash of the app's sources and the context, under a lock, so parallel test files and
 * later runs share it and only a change to cdk/, lambdas/, state-machines/ or the context
 * synthesizes again.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type DeployedLocalStack, type DeployedStackOptions, startDeployedStack, synthesizeAssembly } from '../../local/as-deployed/index.ts';

const REPO = resolve(import.meta.dirname, '../..');
const SOURCES = ['cdk', 'lambdas', 'state-machines', 'cdk.json', 'package-lock.json'];
// Under the project, ignored by git, not in any temp dir: the cache outlives a run, and a run
// leaves the temp dir as it found it.
const CACHE = join(REPO, '.cache', 'test-assemblies');
/** Tool folders tests derive, by content (cachedSourceTree). */
const SOURCES_CACHE = join(REPO, '.cache', 'test-sources');
/** A synth takes about 30 s on two busy cores; a lock older than this was left by a killed run. */
const STALE_LOCK_MS = 10 * 60_000;
/** An assembly no run has used for this long is of sources long gone: it is removed when another is synthesized. */
const UNUSED_ASSEMBLY_MS = 24 * 60 * 60_000;

/**
 * A folder of sources a test derives (a changed copy of the tools, say), kept under the cache by
 * its content: the same content gets the same path run after run, so an assembly synthesized
 * from it (its path is in the context) is synthesized once, not once per run. `build` fills a
 * fresh folder; a folder of the same content already there is used instead.
 */
export function cachedSourceTree(name: string, build: (dir: string) => void): string {
  mkdirSync(SOURCES_CACHE, { recursive: true });
  const partial = mkdtempSync(join(SOURCES_CACHE, `${name}.partial-`));
  try {
    build(partial);
    const hash = createHash('sha256');
    hashTree(hash, partial, partial);
    const dir = join(SOURCES_CACHE, `${name}-${hash.digest('hex').slice(0, 24)}`);
    if (!existsSync(dir)) {
      try {
        renameSync(partial, dir);
      } catch (error) {
        // Another run put the same content there first.
        if (!existsSync(dir)) throw error;
      }
    }
    const now = new Date();
    utimesSync(dir, now, now);
    // Folders of older content, unused for a day, go as old assemblies do.
    pruneUnused(SOURCES_CACHE, dir, (entry) => entry.startsWith(`${name}-`));
    return dir;
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
}

/** The `auth=none` assembly. */
export const NO_AUTH = { auth: 'none' } as const;
/** The default (AWS_IAM Function URL) assembly. */
export const IAM_AUTH = {} as const;

/**
 * The folder of the assembly synthesized with `context`; synthesizes it if no run has yet for
 * these sources. Folders named in `extraSources` (e.g. a toolsDir) are hashed too.
 */
export async function deployedAssembly(context: Record<string, string> = {}, extraSources: string[] = []): Promise<string> {
  const hash = createHash('sha256');
  for (const source of [...SOURCES.map((s) => join(REPO, s)), ...extraSources]) hashTree(hash, source);
  hash.update(JSON.stringify(Object.entries(context).sort()));
  const key = hash.digest('hex').slice(0, 24);
  const dir = join(CACHE, key);
  const lock = `${dir}.lock`;
  mkdirSync(CACHE, { recursive: true });
  for (;;) {
    if (existsSync(join(dir, 'manifest.json'))) {
      // Its time says when a run last used it (see pruneUnused).
      const now = new Date();
      utimesSync(dir, now, now);
      return dir;
    }
    try {
      mkdirSync(lock);
    } catch {
      // Another file of this run (or another run) is synthesizing it.
      // The lock may be gone already: then there is nothing stale to remove.
      const lockedAt = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - lockedAt > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
      await sleep(500);
      continue;
    }
    try {
      const partial = `${dir}.partial`;
      rmSync(partial, { recursive: true, force: true });
      await synthesizeAssembly({ outDir: partial, context });
      renameSync(partial, dir);
      pruneUnused(CACHE, dir, (entry) => !entry.endsWith('.lock') && !entry.endsWith('.partial'));
      return dir;
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
}

/** Starts the stack of an assembly the way tests want it: a free port, fast waits, logs kept in `logs`. */
export async function startAssemblyStack(cdkOut: string, options: Partial<DeployedStackOptions> = {}): Promise<{ stack: DeployedLocalStack; logs: string[] }> {
  const logs: string[] = [];
  const stack = await startDeployedStack({ cdkOut, port: 0, waitTimeScale: 0.01, log: (line) => logs.push(line), ...options });
  return { stack, logs };
}

/** Every cached assembly but `kept` that no run has used for a day: each change of the sources leaves one behind. */
/** Removes the entries of `parent` that `prunable` names, other than `kept`, unused for a day. */
function pruneUnused(parent: string, kept: string, prunable: (entry: string) => boolean): void {
  const now = Date.now();
  for (const entry of readdirSync(parent)) {
    const path = join(parent, entry);
    if (path === kept || !prunable(entry)) continue;
    const usedAt = statSync(path, { throwIfNoEntry: false })?.mtimeMs ?? now;
    if (now - usedAt > UNUSED_ASSEMBLY_MS) rmSync(path, { recursive: true, force: true });
  }
}

function hashTree(hash: ReturnType<typeof createHash>, path: string, root = REPO): void {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return;
  if (stat.isFile()) {
    hash.update(relative(root, path)).update(readFileSync(path));
    return;
  }
  for (const entry of readdirSync(path).sort()) {
    if (entry === 'node_modules' || entry.startsWith('.')) continue;
    hashTree(hash, join(path, entry), root);
  }
}
