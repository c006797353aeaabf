/**
 * A stand-in Secrets Manager for the deployed stack's one secret until the IAM-enforcing local
 * Secrets Manager serves it: GetSecretValue and DescribeSecret over AWS JSON 1.1, the value
 * generated once from the template's GenerateSecretString and kept under the data directory.
 */
import { randomInt, randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import type { DeployedStack } from '../assembly/deployed-stack.ts';

export interface LocalSecrets {
  endpoint: string;
  close(): Promise<void>;
}

interface StoredSecret {
  versionId: string;
  secretString: string;
  createdDate: number;
}

/** Serves `secret` on a loopback port; its value persists in `dataDir` when given. */
export async function startLocalSecrets(secret: DeployedStack['secret'], options: { dataDir?: string; host?: string } = {}): Promise<LocalSecrets> {
  const stored = await loadOrCreate(secret, options.dataDir);
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const target = String(request.headers['x-amz-target'] ?? '');
      let body: { SecretId?: string } = {};
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as { SecretId?: string };
      } catch {
        return send(response, 400, { __type: 'SerializationException', message: 'the request body is not JSON' });
      }
      if (body.SecretId !== secret.arn && body.SecretId !== secret.name) {
        return send(response, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." });
      }
      if (target === 'secretsmanager.GetSecretValue') {
        return send(response, 200, {
          ARN: secret.arn,
          Name: secret.name,
          VersionId: stored.versionId,
          SecretString: stored.secretString,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: stored.createdDate,
        });
      }
      if (target === 'secretsmanager.DescribeSecret') {
        return send(response, 200, { ARN: secret.arn, Name: secret.name, VersionIdsToStages: { [stored.versionId]: ['AWSCURRENT'] }, CreatedDate: stored.createdDate });
      }
      send(response, 400, { __type: 'InvalidRequestException', message: `${target || 'this action'} is not served by the local Secrets Manager` });
    });
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function send(response: import('node:http').ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID() });
  response.end(JSON.stringify(body));
}

async function loadOrCreate(secret: DeployedStack['secret'], dataDir: string | undefined): Promise<StoredSecret> {
  const file = dataDir ? join(dataDir, `${secret.name}.json`) : undefined;
  if (file) {
    try {
      return JSON.parse(await readFile(file, 'utf8')) as StoredSecret;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
  const stored = { versionId: randomUUID(), secretString: generate(secret.generateSecretString ?? {}), createdDate: Date.now() / 1000 };
  if (file) {
    await mkdir(dataDir!, { recursive: true });
    await writeFile(file, JSON.stringify(stored), { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return JSON.parse(await readFile(file, 'utf8')) as StoredSecret;
  }
  return stored;
}

/** GenerateSecretString's password rules: length, and which character classes to leave out. */
function generate(rules: Record<string, unknown>): string {
  const length = typeof rules.PasswordLength === 'number' ? rules.PasswordLength : 32;
  let alphabet = '';
  if (!rules.ExcludeLowercase) alphabet += 'abcdefghijklmnopqrstuvwxyz';
  if (!rules.ExcludeUppercase) alphabet += 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
  if (!rules.ExcludeNumbers) alphabet += '0123456789';
  if (!rules.ExcludePunctuation) alphabet += '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';
  if (rules.IncludeSpace) alphabet += ' ';
  const excluded = typeof rules.ExcludeCharacters === 'string' ? rules.ExcludeCharacters : '';
  const usable = [...alphabet].filter((c) => !excluded.includes(c));
  const password = Array.from({ length }, () => usable[randomInt(usable.length)]).join('');
  if (typeof rules.SecretStringTemplate === 'string' && typeof rules.GenerateStringKey === 'string') {
    return JSON.stringify({ ...(JSON.parse(rules.SecretStringTemplate) as object), [rules.GenerateStringKey]: password });
  }
  return password;
}
