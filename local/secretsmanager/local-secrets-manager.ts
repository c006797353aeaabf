/**
 * A small Secrets Manager endpoint (AWS JSON 1.1) for the stack's secrets: GetSecretValue by
 * staging label (AWSCURRENT, AWSPREVIOUS) or VersionId, DescribeSecret, PutSecretValue and
 * RotateSecret, with the service's error shapes. Secrets are seeded from the template's
 * `GenerateSecretString` once; with a data directory the values survive restarts, so a server
 * key generated on the first start still verifies what it signed after the next one.
 * It does no authentication: the IAM gateway in front of it does. So it listens on 127.0.0.1
 * only, whatever the server's `--host`.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { generateSecretString, type GenerateSecretStringSpec } from './generate-secret-string.ts';

/** A secret of the stack. */
export interface LocalSecretSpec {
  name: string;
  arn: string;
  description?: string;
  /** The template's GenerateSecretString; the first start draws a value from it. */
  generateSecretString?: Record<string, unknown>;
  /** The template's SecretString, used as is. */
  secretString?: string;
}

export interface LocalSecretsManagerOptions {
  secrets: LocalSecretSpec[];
  /** Keep the values in `<dataDir>/secretsmanager.json`. @default in memory */
  dataDir?: string;
  /** @deprecated Not used: the endpoint always listens on 127.0.0.1, whatever the server's `--host`. */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
}

export interface LocalSecretsManager {
  /** The URL to pass as the SDK client's `endpoint` (or to the IAM gateway as its upstream). */
  endpoint: string;
  /** The full ARN of a secret named by name, full or partial ARN; undefined for none of ours. */
  secretArn(secretId: string): string | undefined;
  close(): Promise<void>;
}

interface StoredVersion {
  versionId: string;
  secretString: string;
  stages: string[];
  /** Epoch milliseconds. */
  created: number;
}

interface StoredSecret {
  name: string;
  arn: string;
  description?: string;
  generate?: GenerateSecretStringSpec;
  created: number;
  lastChanged: number;
  lastRotated?: number;
  versions: StoredVersion[];
}

class ServiceError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = code;
  }
}

const NOT_FOUND = "Secrets Manager can't find the specified secret.";

/** Starts the endpoint with every secret of `options.secrets` present (seeded on first start). */
export async function startLocalSecretsManager(options: LocalSecretsManagerOptions): Promise<LocalSecretsManager> {
  const file = options.dataDir ? join(options.dataDir, 'secretsmanager.json') : undefined;
  const secrets = new Map<string, StoredSecret>();
  const kept = file ? await readStore(file) : [];
  for (const spec of options.secrets) {
    const previous = kept.find((s) => s.arn === spec.arn || s.name === spec.name);
    if (previous) {
      secrets.set(spec.name, { ...previous, name: spec.name, arn: spec.arn });
      continue;
    }
    const now = Date.now();
    const generate = spec.generateSecretString as GenerateSecretStringSpec | undefined;
    const secretString = spec.secretString ?? generateSecretString(generate);
    secrets.set(spec.name, {
      name: spec.name,
      arn: spec.arn,
      ...(spec.description ? { description: spec.description } : {}),
      ...(generate ? { generate } : {}),
      created: now,
      lastChanged: now,
      versions: [{ versionId: randomUUID(), secretString, stages: ['AWSCURRENT'], created: now }],
    });
  }
  if (file) await writeStore(file, [...secrets.values()]);

  /** Secrets Manager accepts the name, the full ARN, or the ARN without its 6-character suffix. */
  const find = (secretId: string): StoredSecret | undefined => {
    for (const secret of secrets.values()) {
      if (secretId === secret.name || secretId === secret.arn || secret.arn.replace(/-[A-Za-z0-9]{6}$/, '') === secretId) return secret;
    }
    return undefined;
  };
  const persist = async () => {
    if (file) await writeStore(file, [...secrets.values()]);
  };

  const operations: Record<string, (input: Record<string, unknown>) => Promise<unknown>> = {
    async GetSecretValue(input) {
      const secret = required(input);
      const versionId = optional(input, 'VersionId');
      const stage = optional(input, 'VersionStage');
      const version =
        versionId !== undefined
          ? secret.versions.find((v) => v.versionId === versionId && (stage === undefined || v.stages.includes(stage)))
          : secret.versions.find((v) => v.stages.includes(stage ?? 'AWSCURRENT'));
      if (!version) {
        const what = versionId !== undefined ? `VersionId: ${versionId}` : `staging label: ${stage}`;
        throw new ServiceError('ResourceNotFoundException', `Secrets Manager can't find the specified secret value for ${what}`);
      }
      return {
        ARN: secret.arn,
        Name: secret.name,
        VersionId: version.versionId,
        SecretString: version.secretString,
        VersionStages: version.stages,
        CreatedDate: version.created / 1000,
      };
    },
    async DescribeSecret(input) {
      const secret = required(input);
      return {
        ARN: secret.arn,
        Name: secret.name,
        ...(secret.description ? { Description: secret.description } : {}),
        RotationEnabled: false,
        CreatedDate: secret.created / 1000,
        LastChangedDate: secret.lastChanged / 1000,
        ...(secret.lastRotated ? { LastRotatedDate: secret.lastRotated / 1000 } : {}),
        VersionIdsToStages: Object.fromEntries(secret.versions.filter((v) => v.stages.length).map((v) => [v.versionId, v.stages])),
      };
    },
    async PutSecretValue(input) {
      const secret = required(input);
      const secretString = optional(input, 'SecretString');
      if (secretString === undefined) throw new ServiceError('InvalidRequestException', 'You must provide either SecretString or SecretBinary.');
      const versionId = optional(input, 'ClientRequestToken') ?? randomUUID();
      const existing = secret.versions.find((v) => v.versionId === versionId);
      if (existing) {
        if (existing.secretString !== secretString) {
          throw new ServiceError('ResourceExistsException', `You can't modify an existing version, you can only create a new version.`);
        }
        return { ARN: secret.arn, Name: secret.name, VersionId: versionId, VersionStages: existing.stages };
      }
      const stages = Array.isArray(input.VersionStages) ? (input.VersionStages as string[]) : ['AWSCURRENT'];
      addVersion(secret, { versionId, secretString, stages, created: Date.now() });
      await persist();
      return { ARN: secret.arn, Name: secret.name, VersionId: versionId, VersionStages: stages };
    },
    async RotateSecret(input) {
      // No rotation function runs here: the new value is drawn from the template's
      // GenerateSecretString, as a rotation function that regenerates would.
      const secret = required(input);
      const versionId = optional(input, 'ClientRequestToken') ?? randomUUID();
      const now = Date.now();
      addVersion(secret, { versionId, secretString: generateSecretString(secret.generate), stages: ['AWSCURRENT'], created: now });
      secret.lastRotated = now;
      await persist();
      return { ARN: secret.arn, Name: secret.name, VersionId: versionId };
    },
    async ListSecrets() {
      return { SecretList: [...secrets.values()].map((s) => ({ ARN: s.arn, Name: s.name, LastChangedDate: s.lastChanged / 1000 })) };
    },
  };

  function required(input: Record<string, unknown>): StoredSecret {
    const secretId = optional(input, 'SecretId');
    if (secretId === undefined) {
      throw new ServiceError(
        'ValidationException',
        "1 validation error detected: Value null at 'secretId' failed to satisfy constraint: Member must not be null",
      );
    }
    const secret = find(secretId);
    if (!secret) throw new ServiceError('ResourceNotFoundException', NOT_FOUND);
    return secret;
  }

  const server = createServer((req, res) => {
    serve(req, res).catch((error: unknown) =>
      send(res, 500, { __type: 'InternalServiceError', Message: error instanceof Error ? error.message : 'internal error' }),
    );
  });
  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const target = String(req.headers['x-amz-target'] ?? '');
    const body = await readBody(req);
    const operation = target.startsWith('secretsmanager.') ? operations[target.slice('secretsmanager.'.length)] : undefined;
    if (req.method !== 'POST' || !operation) return send(res, 400, { __type: 'UnknownOperationException' });
    let input: Record<string, unknown>;
    try {
      input = body.length ? (JSON.parse(body.toString('utf8')) as Record<string, unknown>) : {};
    } catch {
      return send(res, 400, { __type: 'SerializationException', Message: 'Start of structure or map found where not expected.' });
    }
    try {
      send(res, 200, await operation(input));
    } catch (error) {
      if (!(error instanceof ServiceError)) throw error;
      send(res, 400, { __type: error.code, Message: error.message });
    }
  }

  const { address, port } = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve(server.address() as AddressInfo));
  });
  return {
    endpoint: `http://${address}:${port}`,
    secretArn: (secretId) => find(secretId)?.arn,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The new version takes its stages from every older one; the AWSCURRENT it replaces becomes AWSPREVIOUS. */
function addVersion(secret: StoredSecret, version: StoredVersion): void {
  const becomesCurrent = version.stages.includes('AWSCURRENT');
  for (const old of secret.versions) {
    const wasCurrent = old.stages.includes('AWSCURRENT');
    old.stages = old.stages.filter((stage) => !version.stages.includes(stage) && !(becomesCurrent && stage === 'AWSPREVIOUS'));
    if (becomesCurrent && wasCurrent) old.stages.push('AWSPREVIOUS');
  }
  secret.versions = [...secret.versions.filter((v) => v.stages.length > 0), version];
  secret.lastChanged = version.created;
}

function optional(input: Record<string, unknown>, field: string): string | undefined {
  const value = input[field];
  return typeof value === 'string' && value ? value : undefined;
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/x-amz-json-1.1',
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
  };
  const type = (body as { __type?: unknown }).__type;
  if (status >= 400 && typeof type === 'string') headers['x-amzn-errortype'] = type;
  res.writeHead(status, headers);
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function readStore(file: string): Promise<StoredSecret[]> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as StoredSecret[];
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** Written whole and renamed into place, so a crash mid-write never loses the key. */
async function writeStore(file: string, secrets: StoredSecret[]): Promise<void> {
  await mkdir(join(file, '..'), { recursive: true });
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(temporary, JSON.stringify(secrets, null, 2), { mode: 0o600 });
  await rename(temporary, file);
}
