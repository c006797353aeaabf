/**
 * A new project that uses async-mcp as a package (`async-mcp init`): the files of
 * templates/init/, with the project's name filled in, and a package.json that depends on
 * this version of async-mcp and on the versions of the CDK, esbuild and the test tools this
 * repository builds and tests with.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';

/** The nearest folder above `from` with a package.json: a clone's root, or the installed package's (below it, dist/). */
function packageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

const ROOT = packageRoot(import.meta.dirname);
/** The project's files: templates/init, which the build copies into dist beside this module's compiled one. */
export const TEMPLATE_DIR = join(import.meta.dirname, '..', 'templates', 'init');

/** Files npm leaves out of a package under their own name, kept in the templates under another. */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore' };

/** The packages a project builds, deploys and tests with, at the versions this repository uses. */
const PROJECT_DEV_DEPENDENCIES = ['@types/node', 'aws-cdk', 'aws-cdk-lib', 'constructs', 'esbuild', 'tsx', 'typescript', 'vitest'] as const;

export class InitError extends Error {
  override name = 'InitError';
}

interface OurPackage {
  name: string;
  version: string;
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  peerDependencies?: Record<string, string>;
}

/** A project name as npm takes it, from a folder name: lower case, letters, digits, `-`, `_` and `.`. */
export function projectName(dir: string): string {
  const name = basename(dir)
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[._-]+|-+$/g, '');
  return name || 'my-server';
}

/** The CDK stack name: the project's name in PascalCase, starting with a letter (`my-server` -> `MyServer`). */
export function stackName(name: string): string {
  const pascal = name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((part) => part[0]?.toUpperCase() + part.slice(1))
    .join('');
  return /^[A-Za-z]/.test(pascal) ? pascal : `Server${pascal}`;
}

/**
 * The package.json of a project named `name`, depending on `ours` at its version, or on
 * `ourSpec` (a `file:` tarball, when init ran from one) instead.
 */
export function projectPackageJson(name: string, ours: OurPackage, ourSpec = `^${ours.version}`): Record<string, unknown> {
  const versionOf = (dependency: string) => ours.devDependencies[dependency] ?? ours.dependencies[dependency] ?? ours.peerDependencies?.[dependency];
  return {
    name,
    version: '0.1.0',
    private: true,
    type: 'module',
    engines: { node: '^20.19.0 || ^22.12.0 || >=24' },
    scripts: {
      start: 'async-mcp start --watch',
      test: 'vitest run',
      'validate-tools': 'async-mcp validate-tools',
      'new-tool': 'async-mcp new-tool',
      typecheck: 'tsc --noEmit',
      synth: 'cdk synth',
      deploy: 'cdk deploy',
    },
    dependencies: { [ours.name]: ourSpec, zod: versionOf('zod') ?? 'latest' },
    // npm 11 runs no dependency's install script unless allowed, and warns about each one it
    // skipped. Neither needs its script: esbuild's binary comes as an optional dependency, and
    // classic-level (dynalite's storage) ships prebuilt binaries.
    allowScripts: { esbuild: false, 'classic-level': false },
    devDependencies: Object.fromEntries(PROJECT_DEV_DEPENDENCIES.map((dependency) => [dependency, versionOf(dependency) ?? 'latest'])),
  };
}

/** This package's own package.json. */
export function ourPackage(): OurPackage {
  return JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as OurPackage;
}

/** Files (and folders) in `dir`, or none when it does not exist; throws when it is a file. */
function entriesOf(dir: string): string[] {
  if (!existsSync(dir)) return [];
  if (!statSync(dir).isDirectory()) throw new InitError(`${dir} is a file, not a folder`);
  return readdirSync(dir);
}

/** Every file under `dir`, as paths relative to it. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)))
    .sort();
}

/**
 * The dependency on a tarball that `npx --package ./async-mcp-<version>.tgz async-mcp init`
 * ran from (npm exec passes `--package` on as npm_config_package, relative to where it ran),
 * as a `file:` path from the project's folder; undefined when init ran from anything else.
 */
export function tarballSpec(projectDir: string, env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string | undefined {
  if (env.npm_command !== 'exec') return undefined;
  const tarball = (env.npm_config_package ?? '')
    .split(/[\n,]/)
    .map((entry) => entry.trim())
    .find((entry) => /(^|[\\/])async-mcp-[^\\/]*\.tgz$/.test(entry));
  if (!tarball || /^[a-z][a-z0-9+.-]*:/i.test(tarball)) return undefined;
  const path = resolve(cwd, tarball);
  if (!existsSync(path)) return undefined;
  const fromProject = relative(projectDir, path).split(sep).join('/');
  return `file:${fromProject.startsWith('.') ? fromProject : `./${fromProject}`}`;
}

/**
 * Writes a new project into `dir` (created if need be), which must be empty; returns the
 * files written, relative to it. Throws InitError naming the folder when it is not empty.
 */
export function writeProject(dir: string, ours: OurPackage = ourPackage(), ourSpec?: string): string[] {
  const present = entriesOf(dir);
  if (present.length > 0) {
    const shown = present.slice(0, 3).join(', ') + (present.length > 3 ? `, and ${present.length - 3} more` : '');
    throw new InitError(`${dir} is not empty (it has ${shown}): init writes a new project into a new or empty folder`);
  }
  const name = projectName(dir);
  const fill = (text: string) => text.replaceAll('__PROJECT_NAME__', name).replaceAll('__STACK_NAME__', stackName(name));
  const written: string[] = [];
  for (const file of filesUnder(TEMPLATE_DIR)) {
    const target = join(dirname(file), RENAMED[basename(file)] ?? basename(file));
    mkdirSync(join(dir, dirname(target)), { recursive: true });
    writeFileSync(join(dir, target), fill(readFileSync(join(TEMPLATE_DIR, file), 'utf8')));
    written.push(target);
  }
  writeFileSync(join(dir, 'package.json'), `${JSON.stringify(projectPackageJson(name, ours, ourSpec), null, 2)}\n`);
  written.push('package.json');
  return written.sort();
}
