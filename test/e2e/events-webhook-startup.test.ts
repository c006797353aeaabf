/**
 * `npm start -- --events-webhook URL` takes loopback URLs only: any other URL, or a secret that
 * is not a Standard Webhooks `whsec_` key, stops startup with a message naming it, before
 * anything starts.
 */
import { execFile } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(import.meta.dirname, '../..');

function start(args: string[], env: NodeJS.ProcessEnv = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolvePromise) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'local/main.ts', '--port', '0', ...args],
      { cwd: ROOT, env: { ...process.env, NODE_NO_WARNINGS: '1', ...env }, timeout: 60_000 },
      (error, _stdout, stderr) => {
        resolvePromise({ code: error ? (typeof error.code === 'number' ? error.code : -1) : 0, stderr });
      },
    );
  });
}

describe('--events-webhook at startup', () => {
  it('refuses a URL that is not on a loopback host, naming the host, and starts nothing', async () => {
    const run = await start(['--events-webhook', 'https://hooks.example.com/events']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('Cannot start: --events-webhook: hooks.example.com is not a loopback host');
  });

  it('refuses the same with --as-deployed, before synthesizing anything', async () => {
    const run = await start(['--as-deployed', '--events-webhook', 'http://192.168.1.10:8080/events']);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('192.168.1.10 is not a loopback host');
  });

  it('refuses a secret that is not whsec_ and base64, from the flag or the environment', async () => {
    const flag = await start(['--events-webhook', 'http://127.0.0.1:9/x', '--events-webhook-secret', 'hunter2']);
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--events-webhook-secret: expected whsec_');
    const env = await start(['--events-webhook', 'http://127.0.0.1:9/x'], { ASYNC_MCP_EVENTS_WEBHOOK_SECRET: 'whsec_tooshort' });
    expect(env.code).toBe(2);
    expect(env.stderr).toContain('ASYNC_MCP_EVENTS_WEBHOOK_SECRET: expected whsec_');
  });
});
