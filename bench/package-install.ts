/**
 * What a new project pays to install async-mcp: the tarball's size and file count, then, in a
 * project made by `init` from that tarball, the packages `npm install` brings in (all of them,
 * and those async-mcp itself pulls in), the megabytes of node_modules, and the install's time.
 * The install uses npm's cache as a newcomer's second project would (`--prefer-offline`); the
 * first install on a machine also downloads.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
const BUFFER = 64 * 1024 * 1024;

/** Bytes of every file under `dir`. */
async function bytesUnder(dir: string): Promise<number> {
  let total = 0;
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name))).size;
  }
  return total;
}

/** The installed packages npm's lock file lists, and those reached from `root`'s dependencies. */
function packagesOf(lock: { packages: Record<string, { dependencies?: Record<string, string>; optional?: boolean; dev?: boolean }> }, root: string) {
  const all = Object.keys(lock.packages).filter((path) => path.startsWith('node_modules/'));
  const reached = new Set<string>();
  const visit = (from: string, name: string) => {
    // Node's resolution: the nearest node_modules/<name> up from the dependent's folder.
    for (let base = from; ; base = base.slice(0, Math.max(0, base.lastIndexOf('/node_modules/')))) {
      const path = `${base ? `${base}/` : ''}node_modules/${name}`;
      if (lock.packages[path]) {
        if (reached.has(path)) return;
        reached.add(path);
        for (const dependency of Object.keys(lock.packages[path]?.dependencies ?? {})) visit(path, dependency);
        return;
      }
      if (!base) return;
    }
  };
  visit('', root);
  return { all: all.length, ours: reached.size };
}

export async function printPackageInstall(): Promise<void> {
  console.log('\n== package: what a new project installs');
  const work = await mkdtemp(join(tmpdir(), 'async-mcp-bench-package-'));
  const hadDist = await stat(join(ROOT, 'dist')).then(
    () => true,
    () => false,
  );
  try {
    const packed = await exec('npm', ['pack', '--json', '--pack-destination', work], { cwd: ROOT, env: CLEAN_ENV, maxBuffer: BUFFER });
    if (!hadDist) await rm(join(ROOT, 'dist'), { recursive: true, force: true });
    const [info] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as Array<{
      filename: string;
      size: number;
      unpackedSize: number;
      entryCount: number;
    }>;
    if (!info) throw new Error('npm pack printed nothing');
    console.log(`tarball: ${(info.size / 1024).toFixed(0)} KB packed, ${(info.unpackedSize / 1024 / 1024).toFixed(1)} MB unpacked, ${info.entryCount} files`);
    const tarball = join(work, info.filename);
    await exec('tar', ['xzf', tarball, '-C', work]);
    const project = join(work, 'my-server');
    await exec(process.execPath, [join(work, 'package', 'bin', 'async-mcp.js'), 'init', project], { cwd: work, env: CLEAN_ENV });
    const started = performance.now();
    await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], {
      cwd: project,
      env: CLEAN_ENV,
      maxBuffer: BUFFER,
    });
    const seconds = (performance.now() - started) / 1000;
    const lock = JSON.parse(await readFile(join(project, 'package-lock.json'), 'utf8'));
    const counts = packagesOf(lock, 'async-mcp');
    const megabytes = (await bytesUnder(join(project, 'node_modules'))) / 1024 / 1024;
    console.log(`new project's npm install: ${seconds.toFixed(1)} s (npm cache warm), ${counts.all} packages, ${megabytes.toFixed(0)} MB in node_modules`);
    console.log(`  of which async-mcp and what it depends on: ${counts.ours} packages; the rest are the project's CDK, esbuild, TypeScript and vitest`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
