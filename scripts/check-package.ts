/**
 * `npm run check-package`: what a user of the package gets. Packs the tarball (`npm pack`,
 * which builds dist/), runs `async-mcp init` from it in a temporary folder, installs that
 * project with the tarball (its other dependencies from the registry), adds two tools that ask
 * (`new-tool ask_me --durable --input`, `new-tool ask_machine --input`), and runs the
 * project's `npm test` (their scaffolded tests answer through `async-mcp/testing`),
 * `npx cdk synth` and `npm start`, against which a plain ESM script that
 * imports `async-mcp/client` completes a call of the example tool, on this Node and on each
 * Node of CHECK_PACKAGE_NODES (majors fetched with npx, e.g. "22 24"); the installed bin lists
 * the tools too. It prints the tarball's size and each step's time, removes what it made, and
 * exits 1 on any failure.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const NODES = (process.env.CHECK_PACKAGE_NODES ?? '').split(/\s+/).filter(Boolean);
/** npm and npx inherit npm_config_* from `npm run`; the user's project must not see ours. */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
const BUFFER = 64 * 1024 * 1024;
/** What the package must not carry: sources other than the functions' (lambdas/), tests, benches. (docs/ ships: the user's README and help point at it.) */
const NOT_SHIPPED = ['client', 'local', 'scripts', 'test', 'testing', 'bench', 'examples', 'state-machines'];

/** The script a user would write: no TypeScript, no loader, only the installed package. */
const USER_SCRIPT = `import { join, listTools, MemoryRequestStateStore, startToolCall } from 'async-mcp/client';

const url = process.argv[2];
const store = new MemoryRequestStateStore();
const tools = await listTools(url);
const handle = await startToolCall(url, 'count_words', { text: 'a package, not a fork' }, { store });
const result = await join(handle, { store });
if (result?.structuredContent?.words !== 5) throw new Error('unexpected result: ' + JSON.stringify(result));
console.log(JSON.stringify({ node: process.version, tools: tools.length, dialect: handle.dialect, result: result.structuredContent }));
`;

/** Runs `what`, printing how long it took. */
async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await run();
  console.log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

/** `npm start` in `project` on a free port: its MCP URL once it serves, and how to stop it (npm, sh and node together). */
async function npmStart(project: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const child: ChildProcess = spawn('npm', ['start', '--', '--port', '0'], { cwd: project, env: CLEAN_ENV, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const stop = async () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
    } catch {
      // The group has ended already.
    }
    await exited;
  };
  let output = '';
  const url = await new Promise<string>((done, fail) => {
    const read = (chunk: Buffer) => {
      output += chunk.toString();
      const serving = /serving MCP at (\S+)/.exec(output);
      if (serving?.[1]) done(serving[1]);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.once('exit', (code) => fail(new Error(`npm start exited with ${code}:\n${output}`)));
  }).catch(async (error: unknown) => {
    await stop();
    throw error;
  });
  return { url, stop };
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'async-mcp-package-'));
  let synthesized: Promise<{ stdout: string; stderr: string }> | undefined;
  const hadDist = await stat(join(ROOT, 'dist')).then(
    () => true,
    () => false,
  );
  try {
    const tarball = await step('npm pack', async () => {
      const packed = await exec('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, env: CLEAN_ENV, maxBuffer: BUFFER });
      return join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
    });
    // The pack built dist/ in the tree; a tree that had none is left without one.
    if (!hadDist) await rm(join(ROOT, 'dist'), { recursive: true, force: true });
    console.log(`tarball: ${(await stat(tarball)).size} bytes (${tarball.slice(work.length + 1)})`);

    // init needs nothing but Node: run from the unpacked tarball, as npx runs it once installed.
    const project = join(work, 'my-server');
    await step('async-mcp init, from the tarball', async () => {
      await exec('tar', ['xzf', tarball, '-C', work]);
      await exec(process.execPath, [join(work, 'package', 'bin', 'async-mcp.js'), 'init', project], { cwd: work, env: CLEAN_ENV });
    });
    // --prefer-offline: what npm's cache holds is not asked for again (CI's cache, a second run).
    await step('npm install in the project, async-mcp from the tarball', () =>
      exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', tarball], { cwd: project, env: CLEAN_ENV, maxBuffer: BUFFER }),
    );
    const installed = await readdir(join(project, 'node_modules', 'async-mcp'));
    const carried = installed.filter((entry) => NOT_SHIPPED.includes(entry));
    if (carried.length > 0) throw new Error(`the package carries ${carried.join(', ')}`);
    // Tools that ask, scaffolded with their tests: the project's npm test answers them through async-mcp/testing.
    await step('async-mcp new-tool ask_me --durable --input, and ask_machine --input', async () => {
      const bin = join(project, 'node_modules', 'async-mcp', 'bin', 'async-mcp.js');
      for (const args of [
        ['ask_me', '--durable', '--input'],
        ['ask_machine', '--input'],
      ])
        await exec(process.execPath, [bin, 'new-tool', ...args], { cwd: project, env: CLEAN_ENV });
      for (const tool of ['ask_me', 'ask_machine']) await stat(join(project, 'test', `${tool}.test.ts`));
    });

    // The synth, the longest step, runs beside the others (its output goes outside the project).
    synthesized = step("the project's npx cdk synth (beside the steps below)", () =>
      exec('npx', ['cdk', 'synth', '--no-notices', '-q', '-o', join(work, 'cdk.out')], { cwd: project, env: CLEAN_ENV, maxBuffer: BUFFER }),
    );
    synthesized.catch(() => undefined); // Awaited below; a failure meanwhile is reported there.
    await step("the project's npm test", () => exec('npm', ['test'], { cwd: project, env: CLEAN_ENV, maxBuffer: BUFFER }));
    await step("the project's tsc --noEmit (its app and test against the package's types)", () =>
      exec('npx', ['tsc', '--noEmit'], { cwd: project, env: CLEAN_ENV, maxBuffer: BUFFER }),
    );

    await writeFile(join(project, 'call.mjs'), USER_SCRIPT);
    const server = await step("the project's npm start", () => npmStart(project));
    try {
      const here = await step(`a plain ESM call from node ${process.version}`, () =>
        exec(process.execPath, ['call.mjs', server.url], { cwd: project, env: CLEAN_ENV }),
      );
      console.log(`  ${here.stdout.trim()}`);
      for (const major of NODES) {
        const other = await step(`a plain ESM call from node ${major}`, () =>
          exec('npx', ['-y', '-p', `node@${major}`, 'node', 'call.mjs', server.url], { cwd: project, env: CLEAN_ENV, maxBuffer: BUFFER }),
        );
        console.log(`  ${other.stdout.trim().split('\n').at(-1)}`);
      }
      const bin = await exec(join(project, 'node_modules', '.bin', 'async-mcp'), ['tools', server.url], { cwd: project, env: { ...CLEAN_ENV, HOME: work } });
      console.log(`the installed bin lists ${bin.stdout.trim().split('\n').length} lines of tools`);
    } finally {
      await server.stop();
    }
    const synth = await synthesized;
    const templates = (await readdir(join(work, 'cdk.out'))).filter((file) => file.endsWith('.template.json'));
    if (templates.length === 0) throw new Error(`cdk synth wrote no template:\n${synth.stderr}`);
    console.log(`cdk synth wrote ${templates.length} templates: ${templates.join(', ')}`);
  } finally {
    // Nothing is removed under a synth still writing.
    await synthesized?.catch(() => undefined);
    await rm(work, { recursive: true, force: true });
  }
}

const started = Date.now();
try {
  await main();
  console.log(`check-package passed in ${Math.round((Date.now() - started) / 1000)} s`);
} catch (error) {
  const failed = error as Error & { stdout?: string; stderr?: string };
  console.error(`check-package: ${failed.message}${failed.stdout ? `\n${failed.stdout}` : ''}${failed.stderr ? `\n${failed.stderr}` : ''}`);
  process.exitCode = 1;
}
