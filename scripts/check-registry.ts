/**
 * `npm run check-registry`: the package as a newcomer meets it once it is published. Packs the
 * tarball, publishes it to a local npm registry (Verdaccio, on 127.0.0.1, which serves every
 * other package from the registry npm is configured with), and then, in a fresh folder with
 * only the registry setting pointed at it, runs the README's first block as written: `npx
 * async-mcp init my-server`, `npm install`, `npm start` (answering a real MCP client). Then the
 * project's `npm test` and `npx cdk synth`; then `new-tool` a tool with a TypeScript worker and a
 * durable tool, and `npm test` and the synth again, which must bundle both from the installed
 * package. What npm prints along the way is held to the README's promise: no `npm warn` at all
 * on Node 22 and later, and none about this package on Node 20.
 *
 * On this Node, and on each major of CHECK_REGISTRY_NODES (fetched with npx, e.g. "24").
 * Prints each step's time, removes everything it made, and exits 1 on any failure.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

const exec = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..');
const VERDACCIO = 'verdaccio@6.8.0';
const NODES = (process.env.CHECK_REGISTRY_NODES ?? '').split(/\s+/).filter(Boolean);
/** npm and npx inherit npm_config_* from `npm run`; the newcomer's shell has none of ours. */
const CLEAN_ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));
const BUFFER = 64 * 1024 * 1024;
/** Where the README's first block says the server answers. */
const README_URL = 'http://127.0.0.1:3000/mcp';

/** Runs `what`, printing how long it took. */
async function step<T>(what: string, run: () => Promise<T>): Promise<T> {
  const started = Date.now();
  const result = await run();
  console.log(`${what}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise((done) => server.close(done));
  if (!address || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

/** A child process in its own group, and how to end the group (npm, sh and node together). */
function spawnGroup(command: string, args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child: ChildProcess = spawn(command, args, { ...options, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    output: () => output,
    async stop() {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGTERM');
      } catch {
        // The group has ended already.
      }
      await exited;
    },
  };
}

/** Resolves once `ready(output)` holds; rejects when the process exits first or `ms` pass. */
function waitFor(process: ReturnType<typeof spawnGroup>, ready: (output: string) => boolean, ms: number, what: string): Promise<void> {
  return new Promise((done, fail) => {
    const timer = setTimeout(() => fail(new Error(`${what} not ready after ${ms / 1000} s:\n${process.output()}`)), ms);
    const check = () => {
      if (!ready(process.output())) return;
      clearTimeout(timer);
      done();
    };
    process.child.stdout?.on('data', check);
    process.child.stderr?.on('data', check);
    process.child.once('exit', (code) => {
      clearTimeout(timer);
      fail(new Error(`${what} exited with ${code}:\n${process.output()}`));
    });
  });
}

/** Verdaccio on a free loopback port: this package published there, everything else proxied. */
async function startRegistry(work: string) {
  const upstream = (await exec('npm', ['config', 'get', 'registry'], { env: CLEAN_ENV })).stdout.trim();
  const dir = join(work, 'registry');
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, 'config.yaml'),
    [
      'storage: ./storage',
      'auth:',
      '  htpasswd:',
      '    file: ./htpasswd',
      '    max_users: 1',
      'uplinks:',
      '  upstream:',
      `    url: ${upstream}`,
      '    timeout: 120s',
      'packages:',
      "  'async-mcp':",
      '    access: $all',
      '    publish: $authenticated',
      "  '@*/*':",
      '    access: $all',
      '    proxy: upstream',
      "  '**':",
      '    access: $all',
      '    proxy: upstream',
      'log: { type: stdout, format: pretty, level: warn }',
      '',
    ].join('\n'),
  );
  const port = await freePort();
  const url = `http://127.0.0.1:${port}/`;
  const server = spawnGroup('npx', ['-y', VERDACCIO, '--config', join(dir, 'config.yaml'), '--listen', `127.0.0.1:${port}`], { cwd: dir, env: CLEAN_ENV });
  const started = Date.now();
  for (;;) {
    const ping = await fetch(`${url}-/ping`).catch(() => undefined);
    if (ping?.ok) break;
    if (server.child.exitCode !== null || Date.now() - started > 120_000) {
      await server.stop();
      throw new Error(`Verdaccio did not start:\n${server.output()}`);
    }
    await new Promise((done) => setTimeout(done, 250));
  }
  // A publisher's account: the registry's own sign-up, answered with a token.
  const password = randomBytes(16).toString('hex');
  const signUp = await fetch(`${url}-/user/org.couchdb.user:publisher`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'publisher', password, type: 'user', roles: [], date: new Date().toISOString() }),
  });
  const { token } = (await signUp.json()) as { token?: string };
  if (!signUp.ok || !token) throw new Error(`the registry refused the publisher's sign-up: HTTP ${signUp.status}`);
  return { url, token, stop: () => server.stop() };
}

/** The README's first sh block, as a newcomer copies it. */
async function readmeFirstBlock(): Promise<string> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const block = /```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  if (!block?.includes('npx async-mcp init')) throw new Error("the README's first sh block does not run async-mcp init");
  return block;
}

/** npm's warnings in `output` that the README's promise does not allow on `nodeMajor`. */
function forbiddenWarnings(output: string, nodeMajor: number): string[] {
  const warnings = output
    .split('\n')
    .filter((line) => /^npm warn/i.test(line.trim()))
    // npx's notice that it installs the package it runs: on a terminal, its prompt instead.
    .filter((line) => !/npm warn exec The following package was not found and will be installed: async-mcp@/i.test(line));
  // Node 20 is past its end of life: the durable SDKs' engines field (Node 22) says so, truly.
  return nodeMajor >= 22 ? warnings : warnings.filter((line) => /async-mcp/.test(line) || !/EBADENGINE/.test(line));
}

/** A real MCP client lists the tools and calls the example tool. */
async function callExampleTool(url: string): Promise<string> {
  const client = new Client({ name: 'check-registry', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  try {
    const { tools } = await client.listTools();
    const result = await client.callTool({ name: 'count_words', arguments: { text: 'installed from a registry' } });
    const words = (result.structuredContent as { words?: number } | undefined)?.words;
    if (words !== 4) throw new Error(`count_words answered ${JSON.stringify(result)}`);
    return `${tools.length} tools; count_words answered ${JSON.stringify(result.structuredContent)}`;
  } finally {
    await client.close();
  }
}

/** The PATH whose first node is `major` (npx fetches it), or this one's. */
async function pathFor(major: string | undefined): Promise<string> {
  if (major === undefined) return CLEAN_ENV.PATH ?? '';
  const bin = (await exec('npx', ['-y', '-p', `node@${major}`, '-c', 'dirname "$(command -v node)"'], { env: CLEAN_ENV })).stdout.trim();
  return [bin, CLEAN_ENV.PATH].join(delimiter);
}

/** Every file under `dir` whose text holds `marker`. */
async function filesHolding(dir: string, marker: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.(m?js|cjs)$/.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    if ((await readFile(file, 'utf8')).includes(marker)) found.push(file);
  }
  return found;
}

/** The newcomer's path on one Node: the README's block, the project's test and synth, then two new tools. */
async function newcomer(work: string, registry: string, major: string | undefined): Promise<void> {
  const PATH = await pathFor(major);
  const nodeVersion = (await exec('node', ['--version'], { env: { ...CLEAN_ENV, PATH } })).stdout.trim();
  const nodeMajor = Number(nodeVersion.slice(1).split('.')[0]);
  console.log(`-- node ${nodeVersion}`);
  const home = join(work, `home-${nodeVersion}`);
  const folder = join(work, `newcomer-${nodeVersion}`);
  await mkdir(home, { recursive: true });
  await mkdir(folder, { recursive: true });
  // Only the registry setting: an empty user config, so nothing of this machine's applies.
  await writeFile(join(home, '.npmrc'), '');
  const env = { ...CLEAN_ENV, PATH, HOME: home, npm_config_registry: registry, npm_config_userconfig: join(home, '.npmrc') };
  const project = join(folder, 'my-server');
  const run = (command: string, args: string[], cwd = project) => exec(command, args, { cwd, env, maxBuffer: BUFFER });

  const block = await readmeFirstBlock();
  const readme = spawnGroup('bash', ['-e', '-c', block], { cwd: folder, env });
  try {
    await step("the README's first block, until npm start serves", () =>
      waitFor(readme, (output) => output.includes(`serving MCP at ${README_URL}`), 600_000, "the README's first block"),
    );
    console.log(`  ${await step('a real MCP client against it', () => callExampleTool(README_URL))}`);
  } finally {
    await readme.stop();
  }
  const warned = forbiddenWarnings(readme.output(), nodeMajor);
  if (warned.length > 0) throw new Error(`init, npm install or npm start warned:\n${warned.join('\n')}`);
  console.log(`  init, npm install and npm start printed no npm warning${nodeMajor >= 22 ? '' : ' about async-mcp'}`);

  await step("the project's npm test", () => run('npm', ['test']));
  await step("the project's npx cdk synth", () => run('npx', ['cdk', 'synth', '--no-notices', '-q']));

  // A tool with a TypeScript worker and a durable tool, each with a marker in its code.
  await run('npx', ['async-mcp', 'new-tool', 'word_stats', '--worker']);
  await run('npx', ['async-mcp', 'new-tool', 'sum_slowly', '--durable']);
  const workerMarker = `worker-marker-${randomBytes(4).toString('hex')}`;
  const durableMarker = `durable-marker-${randomBytes(4).toString('hex')}`;
  const workerFile = (await readdir(join(project, 'workers'))).find((file) => file.endsWith('.ts'));
  if (!workerFile) throw new Error('new-tool --worker wrote no TypeScript worker');
  await appendMarker(join(project, 'workers', workerFile), workerMarker);
  await appendMarker(join(project, 'state-machines', 'sum_slowly', 'durable.ts'), durableMarker);
  await step("the project's npm test, with both new tools", () => run('npm', ['test']));
  await rm(join(project, 'cdk.out'), { recursive: true, force: true });
  await step("the project's npx cdk synth, with both new tools", () => run('npx', ['cdk', 'synth', '--no-notices', '-q']));
  for (const marker of [workerMarker, durableMarker]) {
    const bundles = await filesHolding(join(project, 'cdk.out'), marker);
    if (bundles.length === 0) throw new Error(`no bundle in cdk.out holds ${marker}: the synth did not bundle that tool`);
  }
  console.log('  the synth bundled the new worker and the durable tool from the installed package');
}

/** A line that survives bundling (a logged constant is kept) and names the file it came from. */
async function appendMarker(file: string, marker: string): Promise<void> {
  const text = await readFile(file, 'utf8');
  await writeFile(file, `${text}\nexport const BUNDLE_MARKER = '${marker}';\nconsole.log(BUNDLE_MARKER);\n`);
}

async function main(): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'async-mcp-registry-'));
  const hadDist = await stat(join(ROOT, 'dist')).then(
    () => true,
    () => false,
  );
  let registry: Awaited<ReturnType<typeof startRegistry>> | undefined;
  try {
    const tarball = await step('npm pack', async () => {
      const packed = await exec('npm', ['pack', '--silent', '--pack-destination', work], { cwd: ROOT, env: CLEAN_ENV, maxBuffer: BUFFER });
      return join(work, packed.stdout.trim().split('\n').at(-1) ?? '');
    });
    if (!hadDist) await rm(join(ROOT, 'dist'), { recursive: true, force: true });
    registry = await step(`${VERDACCIO} on loopback`, () => startRegistry(work));
    const publisherRc = join(work, 'publisher.npmrc');
    const host = new URL(registry.url).host;
    await writeFile(publisherRc, `registry=${registry.url}\n//${host}/:_authToken=${registry.token}\n`);
    await step('npm publish to it', () =>
      exec('npm', ['publish', tarball, '--userconfig', publisherRc, '--registry', registry?.url ?? ''], {
        cwd: dirname(tarball),
        env: CLEAN_ENV,
        maxBuffer: BUFFER,
      }),
    );
    for (const major of [undefined, ...NODES]) await newcomer(work, registry.url, major);
  } finally {
    await registry?.stop();
    await rm(work, { recursive: true, force: true });
  }
}

const started = Date.now();
try {
  await main();
  console.log(`check-registry passed in ${Math.round((Date.now() - started) / 1000)} s`);
} catch (error) {
  const failed = error as Error & { stdout?: string; stderr?: string };
  console.error(`check-registry: ${failed.message}${failed.stdout ? `\n${failed.stdout}` : ''}${failed.stderr ? `\n${failed.stderr}` : ''}`);
  process.exitCode = 1;
}
