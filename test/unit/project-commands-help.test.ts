/**
 * A project's commands speak of the project: `async-mcp start --help` run by the installed bin in
 * a project made by init words its usage as it was started (`async-mcp start`, or `npm start --`
 * from the project's script), names the project's folders (./workers, not this repository's
 * ./lambdas/handlers/workers) and the docs where the package is installed
 * (node_modules/async-mcp/docs/…); so do new-tool, validate-tools, init and the bin's own usage.
 * The package is laid out as npm installs it, in a temporary project: the real bin, our modules
 * compiled one by one into dist/ as the build does, its docs, and its dependencies (this
 * clone's node_modules, linked).
 */
import { execFile } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { build, type Plugin } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ourPackage, writeProject } from '../../scripts/project-template.ts';

const run = promisify(execFile);
const REPO = join(import.meta.dirname, '..', '..');
/** What the bin imports of ours; everything they import is compiled beside them. */
const ENTRY_POINTS = [
  'local/main.ts',
  'local/local-stack.ts',
  'scripts/init-project.ts',
  'scripts/new-tool.ts',
  'scripts/validate-tools.ts',
  'client/cli.ts',
  'client/cli-command.ts',
  'client/help-paths.ts',
  'lambdas/tools/tool-folder.ts',
];

/** As the package's build compiles: each module alone, its imports left as imports of the compiled names. */
const moduleByModule: Plugin = {
  name: 'module-by-module',
  setup(esbuild) {
    esbuild.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      return { path: args.path.startsWith('.') ? args.path.replace(/\.ts$/, '.js') : args.path, external: true };
    });
  },
};

let work: string;
let project: string;
let bin: string;

beforeAll(async () => {
  work = realpathSync(mkdtempSync(join(tmpdir(), 'async-mcp-project-help-')));
  project = join(work, 'my-server');
  const pkg = join(project, 'node_modules', 'async-mcp');
  writeProject(project, ourPackage());
  mkdirSync(pkg, { recursive: true });
  cpSync(join(REPO, 'bin'), join(pkg, 'bin'), { recursive: true });
  cpSync(join(REPO, 'package.json'), join(pkg, 'package.json'));
  symlinkSync(join(REPO, 'docs'), join(pkg, 'docs'));
  symlinkSync(join(REPO, 'node_modules'), join(pkg, 'node_modules'));
  // The modules the entry points reach, found by a bundle that is not written.
  const { metafile } = await build({
    absWorkingDir: REPO,
    entryPoints: ENTRY_POINTS,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    write: false,
    metafile: true,
    outdir: join(work, 'unused'),
    logLevel: 'silent',
  });
  const modules = Object.keys(metafile.inputs).filter((input) => input.endsWith('.ts') && !input.startsWith('node_modules/'));
  await build({
    absWorkingDir: REPO,
    entryPoints: modules,
    outdir: join(pkg, 'dist'),
    outbase: '.',
    bundle: true,
    plugins: [moduleByModule],
    platform: 'node',
    format: 'esm',
    target: 'node20',
    logLevel: 'silent',
  });
  bin = join(pkg, 'bin', 'async-mcp.js');
}, 120_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** The installed bin run in the project with `args`, in an environment with no npm script or folder settings of the caller's. */
async function inProject(args: string[], env: NodeJS.ProcessEnv = {}): Promise<string> {
  const clean = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(npm_|ASYNC_MCP_)/i.test(name)));
  const { stdout } = await run(process.execPath, [bin, ...args], { cwd: project, env: { ...clean, ...env } });
  return stdout;
}

/** Every path the text shows (`./x`, `node_modules/…`, `docs/…`), with its #anchor cut. */
function pathsIn(text: string): string[] {
  return [...text.matchAll(/(?<![\w/.-])(?:\.\/|node_modules\/|docs\/|lambdas\/)[\w./#-]*/g)].map(([path]) => path.replace(/#.*$/, '').replace(/\.$/, ''));
}

/** The paths of `text` that a project does not have: none, when the help speaks of the project. */
function pathsNotInProject(text: string): string[] {
  return pathsIn(text).filter((path) => !existsSync(join(project, path)));
}

describe('from a project, the installed bin', () => {
  it('words start --help as async-mcp start, with the project’s ./workers and the docs in node_modules/async-mcp', async () => {
    const help = await inProject(['start', '--help']);
    expect(help.startsWith('Usage: async-mcp start [--port 3000]')).toBe(true);
    expect(help).toContain('\n       async-mcp start --cdk-out DIR');
    expect(help).toContain('(default: ./workers;');
    expect(help).toContain('(default: ./state-machines;');
    expect(help).toContain('node_modules/async-mcp/docs/events.md');
    expect(help).not.toMatch(/npm start|lambdas\/|\(docs\//);
    expect(pathsIn(help).length).toBeGreaterThan(3);
    expect(pathsNotInProject(help)).toEqual([]);
  }, 60_000);

  it("words it as npm start -- when the project's npm start runs it", async () => {
    const help = await inProject(['start', '--help'], { npm_lifecycle_event: 'start' });
    expect(help.startsWith('Usage: npm start -- [--port 3000]')).toBe(true);
    expect(help).toContain('(default: ./workers;');
  }, 60_000);

  it('words new-tool, validate-tools and init as the bin, with the project’s folders and docs', async () => {
    for (const command of ['new-tool', 'validate-tools', 'init']) {
      const help = await inProject([command, '--help']);
      expect(help.startsWith(`usage: async-mcp ${command} `)).toBe(true);
      expect(help).not.toMatch(/npm run|lambdas\//);
      expect(pathsNotInProject(help)).toEqual([]);
    }
    expect(await inProject(['new-tool', '--help'])).toContain('(default: ./workers)');
    expect(await inProject(['validate-tools', '--help'])).toContain('node_modules/async-mcp/docs/tools.md');
  }, 60_000);

  it('lists the project commands with --watch, and the docs where they are installed, before the client’s usage', async () => {
    const help = await inProject(['--help']);
    expect(help).toContain('  async-mcp start [--port N] [--data DIR] [--watch]');
    expect(help).toContain('  node_modules/async-mcp/docs/tools.md ');
    expect(help).toContain('node_modules/async-mcp/docs/clients.md#call-now-join-later-the-client-library-and-cli');
    expect(help).not.toMatch(/npm (start|run)|lambdas\//);
    expect(pathsNotInProject(help)).toEqual([]);
    expect(relative(project, bin)).toBe(join('node_modules', 'async-mcp', 'bin', 'async-mcp.js'));
  }, 60_000);
});
