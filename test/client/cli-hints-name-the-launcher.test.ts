/**
 * The commands the CLI suggests (`join <id>`, `login <url>`) must run where the user ran the
 * CLI: inside a clone, through `npm run cli` (or tsx on the sources), the `async-mcp` bin is
 * not on the PATH and `async-mcp join …` is "command not found"; when installed, it is the bin.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliCommand } from '../../client/cli-command.ts';
import { CLI_WITH_TSX, cliEnv, runCli } from './support/cli-process.ts';

const ROOT = resolve(import.meta.dirname, '../..');

describe('cliCommand: how to name the CLI in a hint, from how this process was launched', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, string]>([
    [
      'npm run cli in a clone (tsx runs the sources)',
      ['/usr/bin/node', `${ROOT}/client/cli.ts`],
      { npm_lifecycle_event: 'cli', npm_package_name: 'async-mcp' },
      'npm run cli --',
    ],
    ['tsx on the sources in a clone', ['/usr/bin/node', `${ROOT}/client/cli.ts`], {}, 'npm run cli --'],
    ['the sources on Windows', ['C:\\node.exe', 'C:\\src\\async-mcp\\client\\cli.ts'], {}, 'npm run cli --'],
    ['the installed bin', ['/usr/bin/node', '/usr/local/bin/async-mcp'], {}, 'async-mcp'],
    ['the bin file itself', ['/usr/bin/node', '/home/u/app/node_modules/async-mcp/bin/async-mcp.js'], {}, 'async-mcp'],
    ['the bin started by a program that npx started', ['/usr/bin/node', '/usr/local/bin/async-mcp'], { npm_command: 'exec' }, 'async-mcp'],
    ['the bin through npx', ['/usr/bin/node', '/home/u/app/node_modules/.bin/async-mcp'], { npm_command: 'exec', npm_lifecycle_event: 'npx' }, 'npx async-mcp'],
    [
      'the installed bin inside another project’s npm script called cli',
      ['/usr/bin/node', '/home/u/app/node_modules/.bin/async-mcp'],
      { npm_lifecycle_event: 'cli', npm_package_name: 'my-app' },
      'async-mcp',
    ],
    ['a program using the library', ['/usr/bin/node', '/home/u/app/index.js'], {}, 'async-mcp'],
  ])('%s', (_name, argv, env, expected) => {
    expect(cliCommand(argv, env)).toBe(expected);
  });
});

describe('the hints the CLI prints', () => {
  let server: Server;
  let url: string;
  let stateDir: string;
  beforeAll(async () => {
    // Asks every request for a login, so every command ends in the login hint.
    server = createServer((_req, res) => void res.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"invalid_token"}'));
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-cli-hints-'));
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(stateDir, { recursive: true, force: true });
  });

  it('npm run cli in the clone says: run npm run cli -- login <url>', async () => {
    const run = await new Promise<{ code: number; stderr: string }>((done) => {
      execFile('npm', ['run', '--silent', 'cli', '--', 'tools', url], { cwd: ROOT, env: cliEnv(stateDir), timeout: 60_000 }, (error, _stdout, stderr) =>
        done({ code: error ? Number(error.code) : 0, stderr }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`requires a login: run npm run cli -- login ${url}`);
  });

  it('tsx on the sources in the clone says the same', async () => {
    const run = await runCli(['tools', url], cliEnv(stateDir), CLI_WITH_TSX);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`run npm run cli -- login ${url}`);
  });

  it('the bin says: run async-mcp login <url>', async () => {
    const run = await new Promise<{ code: number; stderr: string }>((done) => {
      // As from a shell: nothing of the npm that runs this test.
      const env = Object.fromEntries(Object.entries(cliEnv(stateDir)).filter(([name]) => !name.startsWith('npm_')));
      execFile(process.execPath, [resolve(ROOT, 'bin/async-mcp.js'), 'tools', url], { cwd: stateDir, env, timeout: 60_000 }, (error, _stdout, stderr) =>
        done({ code: error ? Number(error.code) : 0, stderr }),
      );
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`run async-mcp login ${url}`);
  });
});
