/**
 * `npm run check-package`: what a user of the package gets. Packs the tarball (`npm pack`,
 * which builds dist/), installs it into a new project in a temporary folder (its dependencies
 * from the registry), and runs a plain ESM script there that imports `async-mcp/client` and
 * completes a tool call against the local stack on 127.0.0.1, on this Node and on each Node of
 * CHECK_PACKAGE_NODES (majors fetched with npx, e.g. "22 24"). It also runs the installed bin.
 * It prints the tarball's size and each run's answer, removes what it made, and exits 1 on any
 * failure.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startLocalStack } from '../local/local-stack.ts';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const NODES = (process.env.CHECK_PACKAGE_NODES ?? '').split(/\s+/).filter(Boolean);
/** npm and npx inherit npm_config_* from `npm run`; the user's project must not see ours. */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));

/** The script a user would write: no TypeScript, no loader, only the installed package. */
const USER_SCRIPT = `import { join, listTools, MemoryRequestStateStore, startToolCall } from 'async-mcp/client';

const url = process.argv[2];
const store = new MemoryRequestStateStore();
const tools = await listTools(url);
const handle = await startToolCall(url, 'summarize_numbers', { numbers: [1, 2, 3, 4] }, { store });
const result = await join(handle, { store });
console.log(JSON.stringify({ node: process.version, tools: tools.length, dialect: handle.dialect, result: result?.structuredContent }));
`;

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'async-mcp-package-'));
  const hadDist = await stat(join(ROOT, 'dist')).then(
    () => true,
    () => false,
  );
  try {
    const packed = await run('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, env: CLEAN_ENV, maxBuffer: 16 * 1024 * 1024 });
    // The pack built dist/ in the tree; a tree that had none is left without one.
    if (!hadDist) await rm(join(ROOT, 'dist'), { recursive: true, force: true });
    const tarball = join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
    console.log(`tarball: ${(await stat(tarball)).size} bytes (${tarball.slice(work.length + 1)})`);
    const project = join(work, 'user-project');
    await run('mkdir', ['-p', project]);
    await writeFile(join(project, 'package.json'), JSON.stringify({ name: 'user-project', private: true, type: 'module' }, null, 2));
    await writeFile(join(project, 'call.mjs'), USER_SCRIPT);
    const started = Date.now();
    await run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', tarball], { cwd: project, env: CLEAN_ENV, maxBuffer: 16 * 1024 * 1024 });
    console.log(`installed from the tarball in ${Math.round((Date.now() - started) / 1000)} s`);
    const installed = await readdir(join(project, 'node_modules', 'async-mcp'));
    if (installed.includes('client') || installed.includes('test')) throw new Error(`the package carries sources: ${installed.join(', ')}`);

    const stack = await startLocalStack({ toolsDir: join(ROOT, 'state-machines'), port: 0 });
    try {
      const url = stack.url.href;
      const here = await run(process.execPath, ['call.mjs', url], { cwd: project, env: CLEAN_ENV });
      console.log(`node ${process.version}: ${here.stdout.trim()}`);
      for (const major of NODES) {
        const other = await run('npx', ['-y', '-p', `node@${major}`, 'node', 'call.mjs', url], { cwd: project, env: CLEAN_ENV, maxBuffer: 16 * 1024 * 1024 });
        console.log(`node ${major}: ${other.stdout.trim().split('\n').at(-1)}`);
      }
      const bin = await run(join(project, 'node_modules', '.bin', 'async-mcp'), ['tools', url], { cwd: project, env: { ...CLEAN_ENV, HOME: work } });
      console.log(`the installed bin lists ${bin.stdout.trim().split('\n').length} lines of tools`);
    } finally {
      await stack.close();
    }
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

try {
  await main();
} catch (error) {
  console.error(`check-package: ${error instanceof Error ? error.message : String(error)}`);
  process.exitCode = 1;
}
