/**
 * The CLI and the client library load the SigV4 signer (`@smithy/signature-v4` and its request
 * type) only when a request is signed: a bearer or anonymous client never needs it, and loading
 * it was about a fifth of every CLI command's start-up CPU. The signing itself is held by the
 * signer's own tests (sigv4-signer, signed-cli-command).
 */
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../client/sigv4-signer.ts';
import { staticImports } from '../support/static-imports.ts';

describe('the SigV4 signer, loaded when signing', () => {
  it.each(['client/cli.ts', 'client/index.ts'])('%s imports no @smithy package statically', async (entry) => {
    const { modules, packages } = await staticImports(entry);
    expect(modules.has('client/sigv4-signer.ts'), 'the walk reaches the signer module').toBe(true);
    expect([...packages].filter((name) => name.startsWith('@smithy/'))).toEqual([]);
  });

  it('a request signed with the signer loaded on demand carries a SigV4 authorization', async () => {
    const headers = await signRequest(
      { method: 'POST', url: 'https://abc.lambda-url.eu-west-1.on.aws/mcp', headers: { 'content-type': 'application/json' }, body: '{}' },
      { credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, now: () => new Date('2026-12-07T00:00:00Z') },
    );
    expect(headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261207\/eu-west-1\/lambda\/aws4_request, SignedHeaders=content-type;host;x-amz-date, Signature=[0-9a-f]{64}$/,
    );
    expect(headers['x-amz-date']).toBe('20261207T000000Z');
  });
});
