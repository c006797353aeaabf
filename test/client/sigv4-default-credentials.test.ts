/**
 * Credentials from the default chain are resolved once per process, not once per request:
 * an assume-role profile or a credential_process would otherwise run (and, for roles, mint
 * a new session, so a new principal) for every signed request.
 */
import { chmodSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { signRequest } from '../../client/index.ts';

const dir = mkdtempSync(join(tmpdir(), 'sigv4-chain-'));
const calls = join(dir, 'calls.log');
const saved = { ...process.env };

afterAll(() => {
  process.env = saved;
});

it('signs many requests with one credential_process run', async () => {
  const script = join(dir, 'credentials.sh');
  writeFileSync(
    script,
    `#!/bin/sh\necho call >> '${calls}'\necho '{"Version":1,"AccessKeyId":"AKIDEXAMPLE","SecretAccessKey":"secret","Expiration":"2999-01-01T00:00:00Z"}'\n`,
  );
  chmodSync(script, 0o755);
  writeFileSync(join(dir, 'config'), `[profile counted]\ncredential_process = ${script}\n`);
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_CONTAINER_CREDENTIALS_RELATIVE_URI',
    'AWS_CONTAINER_CREDENTIALS_FULL_URI',
    'AWS_WEB_IDENTITY_TOKEN_FILE',
  ]) {
    delete process.env[name];
  }
  process.env.AWS_CONFIG_FILE = join(dir, 'config');
  process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'credentials');
  process.env.AWS_PROFILE = 'counted';
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  for (let i = 0; i < 3; i++) {
    const headers = await signRequest({ method: 'POST', url: 'https://abc.lambda-url.eu-west-2.on.aws/mcp', headers: {}, body: `{"n":${i}}` });
    expect(headers.authorization).toContain('Credential=AKIDEXAMPLE/');
  }
  expect(readFileSync(calls, 'utf8').trim().split('\n')).toHaveLength(1);
});
