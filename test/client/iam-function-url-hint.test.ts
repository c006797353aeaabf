/**
 * An unsigned request to an IAM-authenticated Function URL gets AWS's own 403
 * `{"Message":"Forbidden"}`, not a JSON-RPC answer. The CLI must say what to do about it
 * ("this URL takes SigV4-signed requests: add --sigv4"), and must not say so when the request
 * was signed and still refused, or when the 403 is not AWS's. The real CLI against the local
 * Function URL server, under AWS_IAM, on loopback.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveFunctionUrl } from '../../local/lambda/function-url-server.ts';
import type { LocalFunction } from '../../local/lambda/local-function.ts';
import { cliEnv, runCli } from './support/cli-process.ts';

const LOCAL_CALLER = {
  accessKeyId: 'AKIALOCALCALLER00001',
  secretAccessKey: 'local-caller-secret-for-this-test-only',
  assumedRoleArn: 'arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local',
  userId: 'AROALOCALCALLER:local',
  accountId: '000000000000',
};

let functionUrl: string;
let closeFunctionUrl: () => Promise<void>;
let plain: Server;
let plainUrl: string;
let stateDir: string;
let invoked = 0;

beforeAll(async () => {
  // Never reached: the URL refuses every request these tests send before invoking anything.
  const invoke = async () => {
    invoked++;
    return {};
  };
  const fn = { invoke, invokeStreaming: invoke, close: async () => undefined } as unknown as LocalFunction;
  const served = await serveFunctionUrl({
    url: { logicalId: 'Url', targetFunctionLogicalId: 'Fn', authType: 'AWS_IAM', invokeMode: 'RESPONSE_STREAM' },
    fn,
    functionArn: 'arn:aws:lambda:us-east-1:000000000000:function:AsyncMcp-Mcp-ABCDEF123456',
    host: '127.0.0.1',
    port: 0,
    path: '/mcp',
    iam: { localCaller: LOCAL_CALLER, authorize: () => ({ allowed: true }) },
  });
  functionUrl = served.url.href;
  closeFunctionUrl = served.close;
  plain = createServer((_req, res) => void res.writeHead(403, { 'content-type': 'text/html' }).end('<h1>403 Forbidden</h1>'));
  await new Promise<void>((done) => plain.listen(0, '127.0.0.1', done));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}/mcp`;
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-iam-hint-'));
});
afterAll(async () => {
  await closeFunctionUrl?.();
  await new Promise((done) => plain.close(done));
  await rm(stateDir, { recursive: true, force: true });
});

describe('a 403 from an IAM-authenticated Function URL', () => {
  it('an unsigned request is told: this URL takes SigV4-signed requests: add --sigv4', async () => {
    const run = await runCli(['tools', functionUrl], cliEnv(stateDir));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('HTTP 403');
    expect(run.stderr).toContain('this URL takes SigV4-signed requests: add --sigv4');
  });

  it('with --json, the hint is in the error message too', async () => {
    const run = await runCli(['call', functionUrl, 'analyze_dataset', '--json'], cliEnv(stateDir));
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout.trim().split('\n').at(-1) ?? '{}').error.message).toContain('add --sigv4');
  });

  it('a signed request the URL refuses is not told to add --sigv4, but what to check', async () => {
    const env = cliEnv(stateDir, { AWS_ACCESS_KEY_ID: 'AKIANOTTHELOCALKEY01', AWS_SECRET_ACCESS_KEY: 'not-the-local-secret' });
    const run = await runCli(['tools', functionUrl, '--sigv4', '--region', 'us-east-1'], env);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('HTTP 403');
    expect(run.stderr).not.toContain('add --sigv4');
    expect(run.stderr).toContain('refused the signed request');
  });

  it('a 403 that is not AWS’s gets no SigV4 hint', async () => {
    const run = await runCli(['tools', plainUrl], cliEnv(stateDir));
    expect(run.code).toBe(1);
    expect(run.stderr).toContain('HTTP 403');
    expect(run.stderr).not.toContain('SigV4');
    expect(invoked).toBe(0);
  });
});
