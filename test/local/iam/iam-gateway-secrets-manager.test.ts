import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeSecretCommand,
  GetSecretValueCommand,
  PutSecretValueCommand,
  RotateSecretCommand,
  SecretsManagerClient,
} from '@aws-sdk/client-secrets-manager';
import { describe, expect, it } from 'vitest';
import { startLocalSecretsManager } from '../../../local/secretsmanager/local-secrets-manager.ts';
import { secretsManagerKey } from '../../../lambdas/aws/secrets-manager-key.ts';
import { ACCOUNT, assumed, REGION, role, useGatewayHarness } from './gateway-harness.ts';

const NAME = 'ServerServerKeySecret396846FA-1A2B3C4D5E6F';
const ARN = `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${NAME}-AbCdEf`;
// The template's secret: AWS::SecretsManager::Secret ServerServerKeySecret396846FA.
const GENERATE = { ExcludePunctuation: true, IncludeSpace: false, PasswordLength: 64 };
// ServerMcpRoleDefaultPolicy7EE236F2 grants GetSecretValue on the secret's Ref (its ARN).
const MCP = role('AsyncMcp-ServerMcpRole827BB655-0A1B2C3D4E5F', [{ Action: 'secretsmanager:GetSecretValue', Effect: 'Allow', Resource: ARN }]);
const ADMIN = role('SecretAdmin', [
  { Action: 'secretsmanager:*', Effect: 'Allow', Resource: `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:ServerServerKey*` },
]);

describe('the local Secrets Manager behind the IAM gateway, driven by the real SecretsManagerClient', () => {
  const harness = useGatewayHarness();

  async function setUp(dataDir?: string) {
    const secrets = harness.closeLater(
      await startLocalSecretsManager({ secrets: [{ name: NAME, arn: ARN, generateSecretString: GENERATE }], ...(dataDir ? { dataDir } : {}) }),
    );
    const authority = harness.authority([MCP, ADMIN]);
    const gateway = await harness.gateway({ service: 'secretsmanager', upstream: secrets.endpoint, authority, resolve: { secretArn: secrets.secretArn } });
    const clientFor = (roleArn: string, session: string) => {
      const client = new SecretsManagerClient({ region: REGION, endpoint: gateway.endpoint, credentials: authority.credentialsFor(roleArn, session) });
      harness.closeLater({ close: () => client.destroy() });
      return client;
    };
    return { secrets, authority, gateway, clientFor };
  }

  it('serves the generated key by name and by ARN, as the template asks for it (64 characters, no punctuation)', async () => {
    const { clientFor, authority } = await setUp();
    const client = clientFor(MCP.arn, 'mcp');
    const byName = await client.send(new GetSecretValueCommand({ SecretId: NAME }));
    expect(byName.SecretString).toMatch(/^[A-Za-z0-9]{64}$/);
    expect(byName).toMatchObject({ ARN, Name: NAME, VersionStages: ['AWSCURRENT'] });
    const byArn = await client.send(new GetSecretValueCommand({ SecretId: ARN }));
    expect(byArn.SecretString).toBe(byName.SecretString);
    // AWS authorizes on the full ARN, however the caller names the secret.
    expect(authority.decisions().map((d) => [d.resource, d.count])).toEqual([[ARN, 2]]);
  });

  it("refuses DescribeSecret to a role granted only GetSecretValue, with AWS's message", async () => {
    const { clientFor } = await setUp();
    const error = await clientFor(MCP.arn, 'mcp')
      .send(new DescribeSecretCommand({ SecretId: NAME }))
      .catch((e: unknown) => e);
    expect(error).toMatchObject({
      name: 'AccessDeniedException',
      message: `User: ${assumed(MCP.name, 'mcp')} is not authorized to perform: secretsmanager:DescribeSecret on resource: ${ARN} because no identity-based policy allows the secretsmanager:DescribeSecret action`,
    });
  });

  it('keeps AWSPREVIOUS after PutSecretValue and RotateSecret, and finds versions by VersionId', async () => {
    const { clientFor } = await setUp();
    const admin = clientFor(ADMIN.arn, 'admin');
    const first = await admin.send(new GetSecretValueCommand({ SecretId: NAME }));
    const put = await admin.send(new PutSecretValueCommand({ SecretId: NAME, SecretString: 'b'.repeat(40) }));
    expect(put.VersionStages).toEqual(['AWSCURRENT']);
    await expect(admin.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPREVIOUS' }))).resolves.toMatchObject({
      SecretString: first.SecretString,
      VersionId: first.VersionId,
    });
    await expect(admin.send(new GetSecretValueCommand({ SecretId: NAME, VersionId: put.VersionId }))).resolves.toMatchObject({ SecretString: 'b'.repeat(40) });

    const rotated = await admin.send(new RotateSecretCommand({ SecretId: NAME }));
    const current = await admin.send(new GetSecretValueCommand({ SecretId: NAME }));
    expect(current.VersionId).toBe(rotated.VersionId);
    expect(current.SecretString).toMatch(/^[A-Za-z0-9]{64}$/);
    await expect(admin.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPREVIOUS' }))).resolves.toMatchObject({
      SecretString: 'b'.repeat(40),
    });
    // The first version lost its last label: it is gone, as in Secrets Manager.
    const described = await admin.send(new DescribeSecretCommand({ SecretId: NAME }));
    expect(described.VersionIdsToStages).toEqual({ [put.VersionId!]: ['AWSPREVIOUS'], [rotated.VersionId!]: ['AWSCURRENT'] });
    await expect(admin.send(new GetSecretValueCommand({ SecretId: NAME, VersionId: first.VersionId }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: `Secrets Manager can't find the specified secret value for VersionId: ${first.VersionId}`,
    });
  });

  it('answers ResourceNotFoundException for a secret it does not hold, to a role allowed to ask', async () => {
    const { clientFor } = await setUp();
    await expect(clientFor(ADMIN.arn, 'admin').send(new GetSecretValueCommand({ SecretId: 'ServerServerKeyOther' }))).rejects.toMatchObject({
      name: 'ResourceNotFoundException',
      message: "Secrets Manager can't find the specified secret.",
    });
  });

  it('keeps the generated key under the data directory across restarts', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'async-mcp-secrets-'));
    try {
      const first = await setUp(dataDir);
      const before = await first.clientFor(MCP.arn, 'mcp').send(new GetSecretValueCommand({ SecretId: NAME }));
      await first.secrets.close();
      const second = await setUp(dataDir);
      const after = await second.clientFor(MCP.arn, 'mcp').send(new GetSecretValueCommand({ SecretId: NAME }));
      expect(after.SecretString).toBe(before.SecretString);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });

  it("the MCP function's key loader reads the key through the gateway with its role's credentials", async () => {
    const { authority, gateway } = await setUp();
    const credentials = authority.credentialsFor(MCP.arn, 'AsyncMcp-ServerMcpFunction');
    const saved = { ...process.env };
    Object.assign(process.env, {
      AWS_ENDPOINT_URL_SECRETS_MANAGER: gateway.endpoint,
      AWS_REGION: REGION,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
      AWS_SESSION_TOKEN: credentials.sessionToken,
    });
    try {
      const key = await secretsManagerKey(NAME)();
      expect(Buffer.from(key).toString('utf8')).toMatch(/^[A-Za-z0-9]{64}$/);
    } finally {
      for (const name of ['AWS_ENDPOINT_URL_SECRETS_MANAGER', 'AWS_REGION', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY', 'AWS_SESSION_TOKEN']) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  });
});
