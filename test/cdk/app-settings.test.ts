/** `cdk deploy -c key=value` settings: defaults, string values from the CLI, clear errors. */
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bareApp } from './cdk-test-app.ts';
import { readAppSettings } from '../../cdk/app-settings.ts';
import { DEFAULT_TOOLS_DIR } from '../../cdk/repo-paths.ts';

const elsewhere = resolve('elsewhere');
const settingsFrom = (context: Record<string, unknown>, cwd = elsewhere) => readAppSettings(bareApp({ context }).node, cwd);

describe('readAppSettings', () => {
  it('defaults to the repository tools, an IAM-authenticated URL and no tracing', () => {
    expect(settingsFrom({})).toEqual({
      stackName: 'AsyncMcp',
      toolsDir: DEFAULT_TOOLS_DIR,
      auth: { kind: 'iam' },
      tracing: false,
      handleTools: true,
      listen: true,
    });
  });

  it('takes the strings the CLI passes', () => {
    expect(
      settingsFrom({ stackName: 'AsyncMcpDev', toolsDir: 'my-tools', workersDir: 'my-workers', functionUrlAuthType: 'NONE', tracing: 'true' }, elsewhere),
    ).toEqual({
      stackName: 'AsyncMcpDev',
      toolsDir: resolve(elsewhere, 'my-tools'),
      workersDir: resolve(elsewhere, 'my-workers'),
      auth: { kind: 'none' },
      tracing: true,
      handleTools: true,
      listen: true,
    });
  });

  it('chooses who may call with auth=iam|oauth|none, principalScope and the oauth* keys', () => {
    expect(settingsFrom({ auth: 'iam', principalScope: 'session' }).auth).toEqual({ kind: 'iam', principalScope: 'session' });
    expect(settingsFrom({ auth: 'none' }).auth).toEqual({ kind: 'none' });
    expect(settingsFrom({ functionUrlAuthType: 'AWS_IAM' }).auth).toEqual({ kind: 'iam' });
    const issuer = 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example';
    // An issuer alone turns OAuth on; scopes come space- or comma-separated from the CLI, or as a cdk.json array.
    expect(
      settingsFrom({ oauthIssuer: issuer, oauthAudience: 'api://mcp', oauthScopes: 'mcp/tools, mcp/admin', oauthResourceUrl: 'https://mcp.example.com/mcp' })
        .auth,
    ).toEqual({
      kind: 'oauth',
      issuer,
      audience: 'api://mcp',
      requiredScopes: ['mcp/tools', 'mcp/admin'],
      resourceUrl: 'https://mcp.example.com/mcp',
    });
    expect(settingsFrom({ auth: 'oauth', oauthIssuer: issuer, oauthScopes: ['a', 'b'] }).auth).toEqual({ kind: 'oauth', issuer, requiredScopes: ['a', 'b'] });
  });

  it('takes CORS origins, comma-separated or as an array', () => {
    expect(settingsFrom({ corsAllowedOrigins: 'https://a.example.com,https://b.example.com' }).corsAllowedOrigins).toEqual([
      'https://a.example.com',
      'https://b.example.com',
    ]);
    expect(settingsFrom({ corsAllowedOrigins: ['*'] }).corsAllowedOrigins).toEqual(['*']);
    expect(settingsFrom({}).corsAllowedOrigins).toBeUndefined();
  });

  it('refuses auth settings that contradict each other, naming the key', () => {
    const issuer = 'https://issuer.example.com';
    expect(() => settingsFrom({ auth: 'oauth' })).toThrow(/Invalid context "oauthIssuer": auth=oauth needs the issuer/);
    expect(() => settingsFrom({ auth: 'iam', oauthIssuer: issuer })).toThrow(/Invalid context "oauthIssuer"/);
    expect(() => settingsFrom({ functionUrlAuthType: 'AWS_IAM', oauthIssuer: issuer })).toThrow(/Invalid context "oauthIssuer"/);
    expect(() => settingsFrom({ auth: 'iam', functionUrlAuthType: 'NONE' })).toThrow(/Invalid context "functionUrlAuthType"/);
    expect(() => settingsFrom({ oauthScopes: 'a' })).toThrow(/Invalid context "oauthScopes": it needs oauthIssuer/);
    expect(() => settingsFrom({ oauthIssuer: issuer, principalScope: 'role' })).toThrow(/Invalid context "principalScope"/);
    expect(() => settingsFrom({ principalScope: 'user' })).toThrow(/Invalid context "principalScope"/);
    expect(() => settingsFrom({ auth: 'open' })).toThrow(/Invalid context "auth"/);
  });

  it('serves handle tools unless handleTools=false, as a CLI string or a cdk.json boolean', () => {
    expect(settingsFrom({}).handleTools).toBe(true);
    expect(settingsFrom({ handleTools: 'true' }).handleTools).toBe(true);
    expect(settingsFrom({ handleTools: 'false' }).handleTools).toBe(false);
    expect(settingsFrom({ handleTools: false }).handleTools).toBe(false);
    expect(() => settingsFrom({ handleTools: 'yes' })).toThrow(/Invalid context "handleTools"/);
  });

  it('serves the operation card unless operationCard=false, leaving the construct default when unset', () => {
    expect(settingsFrom({})).not.toHaveProperty('operationCard');
    expect(settingsFrom({ operationCard: 'true' }).operationCard).toBe(true);
    expect(settingsFrom({ operationCard: 'false' }).operationCard).toBe(false);
    expect(settingsFrom({ operationCard: false }).operationCard).toBe(false);
    expect(() => settingsFrom({ operationCard: 'off' })).toThrow(/CDK context operationCard must be true or false/);
  });

  it('takes the active-operation limit and the reserved concurrencies, as CLI strings or cdk.json numbers', () => {
    const limits = { maxActiveOperations: 25, mcpReservedConcurrency: 50, statusSyncReservedConcurrency: 5, workerReservedConcurrency: 20 };
    const asStrings = Object.fromEntries(Object.entries(limits).map(([key, value]) => [key, String(value)]));
    expect(settingsFrom(asStrings)).toMatchObject(limits);
    expect(settingsFrom(limits)).toMatchObject(limits);
  });

  it('takes the nested stack counts of the tools and the workers, leaving the defaults when unset', () => {
    expect(settingsFrom({ toolStackCount: '16', workerStackCount: 2 })).toMatchObject({ toolStackCount: 16, workerStackCount: 2 });
    expect(settingsFrom({})).not.toHaveProperty('toolStackCount');
    expect(() => settingsFrom({ toolStackCount: '0' })).toThrow(/Invalid context "toolStackCount"/);
  });

  it('names the context key it cannot use', () => {
    expect(() => settingsFrom({ functionUrlAuthType: 'none' })).toThrow(/Invalid context "functionUrlAuthType"/);
    expect(() => settingsFrom({ tracing: 'yes' })).toThrow(/Invalid context "tracing"/);
    expect(() => settingsFrom({ stackName: 'no spaces' })).toThrow(/Invalid context "stackName"/);
    for (const bad of ['0', '-1', '2.5', 'lots', 0]) {
      expect(() => settingsFrom({ maxActiveOperations: bad }), String(bad)).toThrow(/Invalid context "maxActiveOperations"/);
      expect(() => settingsFrom({ mcpReservedConcurrency: bad }), String(bad)).toThrow(/Invalid context "mcpReservedConcurrency"/);
    }
  });
});
