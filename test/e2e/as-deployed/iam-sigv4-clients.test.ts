/**
 * The default assembly (AWS_IAM Function URL) run as deployed, with our own clients: wrongly
 * signed requests get the Function URL's own 403, and requests signed with the local credentials
 * (access key `local`, secret `local`) reach the MCP function as the assumed-role caller, through
 * the client library's `sigv4` option and the CLI's `--sigv4`.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join as joinPath } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join, MemoryRequestStateStore, sigV4Fetch, startToolCall } from '../../../client/index.ts';
import type { DeployedLocalStack } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, IAM_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { cliEnv, lastJson, runCli } from '../../client/support/cli-process.ts';

const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
const SIGV4 = { region: 'us-east-1', credentials: LOCAL_CREDENTIALS };
const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'iam-url', version: '1.0.0' } },
});
const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

let stack: DeployedLocalStack;
let stateDir: string;

beforeAll(async () => {
  ({ stack } = await startAssemblyStack(await deployedAssembly(IAM_AUTH)));
  stateDir = await mkdtemp(joinPath(tmpdir(), 'async-mcp-iam-cli-'));
}, 240_000);
afterAll(async () => {
  await stack?.close();
  if (stateDir) await rm(stateDir, { recursive: true, force: true });
});

describe('our clients against an AWS_IAM Function URL from the assembly', () => {
  it('a request signed with a secret other than the local one gets 403', async () => {
    const forged = sigV4Fetch({ region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'not-the-secret' } });
    const response = await forged(stack.url.href, { method: 'POST', headers: HEADERS, body: INITIALIZE });
    expect(response.status).toBe(403);
  });

  it('the client library with sigv4 starts analyze_dataset and joins its result', async () => {
    const store = new MemoryRequestStateStore();
    const handle = await startToolCall(stack.url, 'analyze_dataset', { rows: 100_000, seed: 2 }, { auth: { sigv4: SIGV4 }, store });
    const result = await join(handle, { auth: { sigv4: SIGV4 }, store, timeoutMs: 60_000 });
    expect(result?.isError).toBeFalsy();
    expect((result?.structuredContent as { count: number } | undefined)?.count).toBe(100_000);
  });

  it('npm run cli -- call … --sigv4 completes quick_calculation with the local credentials from the environment', async () => {
    const env = cliEnv(stateDir, { AWS_ACCESS_KEY_ID: 'local', AWS_SECRET_ACCESS_KEY: 'local', AWS_REGION: 'us-east-1' });
    delete env.AWS_SESSION_TOKEN;
    delete env.AWS_PROFILE;
    const run = await runCli(['call', stack.url.href, 'quick_calculation', '-a', 'a=6', '-a', 'b=7', '-a', 'op=mul', '--sigv4', '--json'], env);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(lastJson(run).structuredContent).toEqual({ result: 42 });
  });

  it('the CLI without --sigv4 is refused', async () => {
    const run = await runCli(['tools', stack.url.href, '--json'], cliEnv(stateDir));
    expect(run.code).not.toBe(0);
  });

  it('the local caller was authorized for lambda:InvokeFunctionUrl as its assumed role', () => {
    const invokes = stack.authority.decisions().filter((d) => d.action === 'lambda:InvokeFunctionUrl');
    expect(invokes.some((d) => d.allowed && d.roleArn.includes('async-mcp-local-caller'))).toBe(true);
  });
});
