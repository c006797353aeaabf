/**
 * The banner of an AWS_IAM assembly run as deployed prints the CLI command that works as it is
 * pasted: the Region and the local key in the environment, and nothing of the shell's own AWS
 * settings (a profile, a session token) getting in the way of the signature.
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { deployedAssembly, IAM_AUTH } from '../../support/deployed-assembly.ts';

const ROOT = resolve(import.meta.dirname, '../../..');

let server: ReturnType<typeof spawn>;
let output = '';
let stateDir: string;

beforeAll(async () => {
  const cdkOut = await deployedAssembly(IAM_AUTH);
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-banner-cli-'));
  server = spawn(process.execPath, ['--import', 'tsx', 'local/main.ts', '--cdk-out', cdkOut, '--port', '0'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  server.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  server.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  await vi.waitFor(() => expect(output).toContain('Where this differs from AWS'), { timeout: 120_000, interval: 100 });
}, 600_000);

afterAll(async () => {
  if (server && server.exitCode === null) {
    const exited = new Promise((done) => server.once('exit', done));
    server.kill('SIGTERM');
    await exited;
  }
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('--cdk-out with an AWS_IAM Function URL', () => {
  it('prints a CLI command that, pasted into a shell with its own AWS profile and session token, lists the tools', async () => {
    const command = output
      .split('\n')
      .find((line) => line.includes('npm run cli --'))
      ?.trim();
    expect(command).toMatch(
      /^AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local .*npm run cli -- tools http:\/\/127\.0\.0\.1:\d+\/mcp --sigv4$/,
    );
    const {
      AWS_ACCESS_KEY_ID: _key,
      AWS_SECRET_ACCESS_KEY: _secret,
      AWS_REGION: _region,
      AWS_DEFAULT_REGION: _default,
      ASYNC_MCP_TOKEN: _token,
      ...env
    } = process.env;
    const run = await new Promise<{ code: number; stdout: string; stderr: string }>((done) => {
      execFile(
        'sh',
        ['-c', command!],
        {
          cwd: ROOT,
          env: { ...env, AWS_PROFILE: 'a-profile-of-the-shell', AWS_SESSION_TOKEN: 'a-token-of-the-shell', ASYNC_MCP_STATE_DIR: stateDir },
          timeout: 60_000,
        },
        (error, stdout, stderr) => done({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stdout, stderr }),
      );
    });
    expect(run.stderr).not.toMatch(/error|403/i);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('quick_calculation');
    expect(run.stdout).toContain('run_test_suite');
  });
});

describe('the as-deployed banner', () => {
  it('lists each tool with its invocation (async, sync or both) and workflow type, as npm start does', () => {
    expect(output).toMatch(/^ {2}analyze_dataset\s+async\s+STANDARD\s+\S/m);
    expect(output).toMatch(/^ {2}quick_calculation\s+sync\s+EXPRESS\s+\S/m);
  });

  it('without --data, says the function logs go to the console only, and where --data DIR would keep them', () => {
    expect(output).not.toContain('<data>');
    expect(output).toMatch(/logs go to the console only \(with --data DIR, also to DIR\/logs\/<logicalId>\.log\)/);
  });
});
