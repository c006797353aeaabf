/**
 * The installed bin's module hooks (bin/compiled-modules-hooks.mjs): a compiled module of ours
 * that imports a neighbour by its source name (the local stack's built-in workers, `….ts`) gets
 * the compiled module beside it, inside the package's dist/ only. Run in a package-like folder
 * (bin/ and dist/) in a temporary directory, removed after the test.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, beforeEach, expect, it } from 'vitest';

const run = promisify(execFile);
let pkg: string;

beforeEach(() => {
  pkg = mkdtempSync(join(tmpdir(), 'async-mcp-hooks-'));
  mkdirSync(join(pkg, 'bin'));
  mkdirSync(join(pkg, 'dist', 'workers'), { recursive: true });
  copyFileSync(join(import.meta.dirname, '..', '..', 'bin', 'compiled-modules-hooks.mjs'), join(pkg, 'bin', 'compiled-modules-hooks.mjs'));
  writeFileSync(join(pkg, 'dist', 'workers', 'request-input.js'), "export const handler = () => 'compiled';\n");
  mkdirSync(join(pkg, 'elsewhere'));
  writeFileSync(join(pkg, 'elsewhere', 'mine.js'), 'export const handler = () => 1;\n');
});
afterEach(() => rmSync(pkg, { recursive: true, force: true }));

/** Imports `url` in a plain Node with the hooks registered; what it prints, or the error's code. */
async function importWithHooks(url: string): Promise<string> {
  const script = `import { register } from 'node:module';
register(${JSON.stringify(pathToFileURL(join(pkg, 'bin', 'compiled-modules-hooks.mjs')).href)});
try { const { handler } = await import(${JSON.stringify(url)}); console.log(handler()); } catch (error) { console.log(error.code); }`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script]);
  return stdout.trim();
}

it('answers a source name inside dist/ with the compiled module beside it, and leaves other names as Node resolves them', async () => {
  expect(await importWithHooks(pathToFileURL(join(pkg, 'dist', 'workers', 'request-input.ts')).href)).toBe('compiled');
  // Outside dist/, a .ts name is the user's: left to Node (and tsx), which finds no such file here.
  expect(await importWithHooks(pathToFileURL(join(pkg, 'elsewhere', 'mine.ts')).href)).toBe('ERR_MODULE_NOT_FOUND');
  // A source name with no compiled module beside it is not found either.
  expect(await importWithHooks(pathToFileURL(join(pkg, 'dist', 'workers', 'missing.ts')).href)).toBe('ERR_MODULE_NOT_FOUND');
}, 30_000);
