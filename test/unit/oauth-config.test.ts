import { describe, expect, it } from 'vitest';
import { isLoopbackHost, oauthConfigFromEnv, OAuthConfigError, resolveOAuthConfig, type OAuthConfig } from '../../lambdas/auth/oauth-config.ts';
import {
  protectedResourceMetadataPaths,
  protectedResourceMetadataResponseFor,
  protectedResourceMetadataUrl,
} from '../../lambdas/auth/protected-resource-metadata.ts';
import { iamPrincipal, oauthPrincipal, roleOfAssumedRole } from '../../lambdas/auth/principals.ts';

const base: OAuthConfig = { issuer: 'https://auth.example.com', resourceUrl: 'https://abc.lambda-url.eu-west-1.on.aws/mcp' };
const refusal = (config: Partial<OAuthConfig>) => () => resolveOAuthConfig({ ...base, ...config });

describe('OAuth configuration', () => {
  it('defaults the audience to the canonical resource URL (RFC 8707): lowercase host, no trailing slash', () => {
    const config = resolveOAuthConfig({ ...base, resourceUrl: 'HTTPS://ABC.lambda-url.eu-west-1.on.aws/mcp/' });
    expect(config.resourceUrl).toBe('https://abc.lambda-url.eu-west-1.on.aws/mcp');
    expect(config.audience).toBe('https://abc.lambda-url.eu-west-1.on.aws/mcp');
    expect(resolveOAuthConfig({ ...base, resourceUrl: 'https://mcp.example.com/' }).resourceUrl).toBe('https://mcp.example.com');
  });

  it('keeps the issuer verbatim, since iss is compared as an exact string', () => {
    expect(resolveOAuthConfig({ ...base, issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC' }).issuer).toBe(
      'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_AbC',
    );
  });

  it('refuses an http issuer on a host that is not loopback, saying why', () => {
    expect(refusal({ issuer: 'http://auth.example.com' })).toThrow(OAuthConfigError);
    expect(refusal({ issuer: 'http://auth.example.com' })).toThrow(/uses http on a host that is not loopback/);
    expect(refusal({ issuer: 'http://10.0.0.5:8080' })).toThrow(/not loopback/);
  });

  it('allows http issuers on loopback: 127.0.0.0/8, ::1 and localhost', () => {
    for (const issuer of ['http://127.0.0.1:9400', 'http://127.1.2.3', 'http://[::1]:9400', 'http://localhost:9400/tenant']) {
      expect(resolveOAuthConfig({ ...base, issuer }).issuer).toBe(issuer);
    }
    expect(isLoopbackHost('127.0.0.1.evil.example')).toBe(false);
    expect(isLoopbackHost('localhost.evil.example')).toBe(false);
  });

  it('refuses issuers with a query or fragment (RFC 8414 §2), other schemes, and non-URLs', () => {
    expect(refusal({ issuer: 'https://auth.example.com?tenant=1' })).toThrow(/query or fragment/);
    expect(refusal({ issuer: 'https://auth.example.com#x' })).toThrow(/query or fragment/);
    expect(refusal({ issuer: 'ftp://auth.example.com' })).toThrow(/https/);
    expect(refusal({ issuer: 'auth.example.com' })).toThrow(/not an absolute URL/);
  });

  it('refuses a resource URL with a fragment, or over http off loopback', () => {
    expect(refusal({ resourceUrl: 'https://mcp.example.com/mcp#frag' })).toThrow(/fragment/);
    expect(refusal({ resourceUrl: 'http://mcp.example.com/mcp' })).toThrow(/https/);
  });

  it('refuses scopes that are not RFC 6749 scope tokens', () => {
    expect(refusal({ requiredScopes: ['mcp tools'] })).toThrow(/scope token/);
    expect(resolveOAuthConfig({ ...base, requiredScopes: ['mcp:tools', 'mcp:tools'] }).requiredScopes).toEqual(['mcp:tools']);
  });

  it('reads ASYNC_MCP_OAUTH_* from the environment; no issuer means OAuth is off', () => {
    expect(oauthConfigFromEnv({}, base.resourceUrl)).toBeUndefined();
    expect(
      oauthConfigFromEnv(
        { ASYNC_MCP_OAUTH_ISSUER: 'https://auth.example.com', ASYNC_MCP_OAUTH_AUDIENCE: 'api://mcp', ASYNC_MCP_OAUTH_SCOPES: 'a, b c' },
        base.resourceUrl,
      ),
    ).toEqual({ issuer: 'https://auth.example.com', audience: 'api://mcp', requiredScopes: ['a', 'b', 'c'], resourceUrl: base.resourceUrl });
  });
});

describe('protected-resource metadata (RFC 9728)', () => {
  const config = resolveOAuthConfig({ ...base, requiredScopes: ['mcp:tools'] });
  const get = (path: string, method = 'GET') =>
    protectedResourceMetadataResponseFor(config, new Request(`https://abc.lambda-url.eu-west-1.on.aws${path}`, { method }));

  it('names the metadata URL by inserting the well-known segment before the resource path', () => {
    expect(protectedResourceMetadataUrl('https://h.example/mcp')).toBe('https://h.example/.well-known/oauth-protected-resource/mcp');
    expect(protectedResourceMetadataUrl('https://h.example')).toBe('https://h.example/.well-known/oauth-protected-resource');
    expect(protectedResourceMetadataPaths('https://h.example')).toEqual(['/.well-known/oauth-protected-resource']);
  });

  it('serves resource, authorization_servers, scopes_supported and bearer_methods_supported at both well-known paths', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const response = get(path)!;
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toBe('application/json');
      expect(response.headers.get('access-control-allow-origin')).toBe('*');
      expect(await response.json()).toEqual({
        resource: 'https://abc.lambda-url.eu-west-1.on.aws/mcp',
        authorization_servers: ['https://auth.example.com'],
        scopes_supported: ['mcp:tools'],
        bearer_methods_supported: ['header'],
      });
    }
  });

  it('leaves out scopes_supported when no scope is required', async () => {
    const open = resolveOAuthConfig(base);
    const response = protectedResourceMetadataResponseFor(open, new Request('https://x.example/.well-known/oauth-protected-resource/mcp'))!;
    expect(await response.json()).not.toHaveProperty('scopes_supported');
  });

  it('answers undefined for every other path, so the MCP endpoint handles it', () => {
    for (const path of ['/mcp', '/', '/.well-known/oauth-protected-resource/other', '/.well-known/oauth-authorization-server']) {
      expect(get(path)).toBeUndefined();
    }
  });

  it('answers a CORS preflight and refuses other methods', () => {
    expect(get('/.well-known/oauth-protected-resource/mcp', 'OPTIONS')!.status).toBe(204);
    expect(get('/.well-known/oauth-protected-resource/mcp', 'POST')!.status).toBe(405);
    expect(get('/.well-known/oauth-protected-resource/mcp', 'HEAD')!.status).toBe(200);
  });
});

describe('principals', () => {
  it('maps an assumed-role session to its role, so refreshed credentials keep their operations', () => {
    expect(roleOfAssumedRole('arn:aws:sts::123456789012:assumed-role/Builder/i-0abc123')).toBe('arn:aws:iam::123456789012:role/Builder');
    expect(roleOfAssumedRole('arn:aws:sts::123456789012:assumed-role/Builder/botocore-session-1718')).toBe(
      roleOfAssumedRole('arn:aws:sts::123456789012:assumed-role/Builder/other-session'),
    );
    // Session names may contain @ . = , - (an email as session name).
    expect(roleOfAssumedRole('arn:aws:sts::123456789012:assumed-role/AWSReservedSSO_Admin_1a2b/jane@example.com')).toBe(
      'arn:aws:iam::123456789012:role/AWSReservedSSO_Admin_1a2b',
    );
  });

  it('keeps the partition', () => {
    expect(roleOfAssumedRole('arn:aws-cn:sts::123456789012:assumed-role/R/s')).toBe('arn:aws-cn:iam::123456789012:role/R');
    expect(roleOfAssumedRole('arn:aws-us-gov:sts::123456789012:assumed-role/R/s')).toBe('arn:aws-us-gov:iam::123456789012:role/R');
  });

  it('leaves IAM users, federated users, the root and anything else unchanged', () => {
    for (const arn of [
      'arn:aws:iam::123456789012:user/alice',
      'arn:aws:iam::123456789012:user/division/alice',
      'arn:aws:sts::123456789012:federated-user/bob',
      'arn:aws:iam::123456789012:root',
      'arn:aws:iam::123456789012:role/Builder',
      'arn:aws:sts::123456789012:assumed-role/NoSession',
      'AIDAEXAMPLECALLERID',
    ]) {
      expect(roleOfAssumedRole(arn)).toBe(arn);
    }
  });

  it('names the kind of every principal, so the two kinds never share a key', () => {
    expect(iamPrincipal('arn:aws:iam::123456789012:user/alice')).toBe('iam:arn:aws:iam::123456789012:user/alice');
    expect(oauthPrincipal('https://auth.example.com', 'alice')).toBe('oauth:https://auth.example.com#alice');
    // A subject crafted to look like an IAM principal still carries the oauth kind.
    expect(oauthPrincipal('https://auth.example.com', 'iam:arn:aws:iam::1:user/a')).toMatch(/^oauth:/);
  });
});
