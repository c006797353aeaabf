/**
 * A fresh `npm install` in a clone says nothing about the Node version: the engine warnings of
 * the packages that ask for Node 22 (and run on 20.19+) are kept out by the project's .npmrc
 * (npm logs errors only), and the package has no install-time script (`npm start` and
 * `npm test` say what Node 20 means). A dry run resolves the same tree and prints the same
 * warnings, without touching node_modules.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { promisify } from 'node:util';
import { expect, it } from 'vitest';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '../..');
// `npm test` passes its own npm_config_* settings down; an install a newcomer runs has none.
const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.toLowerCase().startsWith('npm_')));

it('npm install on this Node prints no EBADENGINE warning and no line about the Node version', async () => {
  const { stdout, stderr } = await run('npm', ['install', '--dry-run', '--no-audit', '--no-fund'], { cwd: ROOT, env, timeout: 120_000 });
  const output = `${stdout}\n${stderr}`;
  expect(output).not.toContain('EBADENGINE');
  const aboutNode = output.split('\n').filter((line) => /\bnode(\.js)?\b/i.test(line) && !line.startsWith('> '));
  expect(aboutNode).toEqual([]);
}, 180_000);
