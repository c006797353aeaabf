/**
 * Server key rotation: sessions and requestState signed before a rotation stay valid, on
 * every container. The key loader reads AWSCURRENT and AWSPREVIOUS (from the local Secrets
 * Manager, through the real SecretsManagerClient), verifies with both, reads them again
 * every five minutes (lazily, on use), and at once (bounded) when a state verifies with
 * neither; a failed refresh keeps the keys it holds.
 */
import { GetSecretValueCommand, PutSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY_REFRESH_MS, MIN_FORCED_REFRESH_MS, secretsManagerKey } from '../../lambdas/aws/secrets-manager-key.ts';
import { mintSessionId, readSessionId } from '../../lambdas/mcp/input/legacy-session.ts';
import { openRequestState, RequestStateError, sealRequestState } from '../../lambdas/mcp/input/request-state.ts';
import { cachedServerKey, verifyWithKeys, type ServerKey } from '../../lambdas/shared/server-key.ts';
import { startLocalSecretsManager, type LocalSecretsManager } from '../../local/secretsmanager/local-secrets-manager.ts';

const NAME = 'ServerServerKeySecret';
const ARN = `arn:aws:secretsmanager:us-east-1:123456789012:secret:${NAME}-AbCdEf`;
const OWNER = 'owner-1';
const ELICITATION = { elicitation: { form: {} } };

let secrets: LocalSecretsManager;
let client: SecretsManagerClient;
let clock: number;
let reads: number;

beforeEach(async () => {
  secrets = await startLocalSecretsManager({ secrets: [{ name: NAME, arn: ARN, secretString: 'a'.repeat(64) }] });
  client = new SecretsManagerClient({ region: 'us-east-1', endpoint: secrets.endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  reads = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      reads++;
      return next(args);
    },
    { step: 'initialize', name: 'countReads' },
  );
  clock = 1_000_000;
});
afterEach(async () => {
  client.destroy();
  await secrets.close();
});

/** One container's key loader, on the test's clock. */
const container = () => secretsManagerKey(NAME, { client, now: () => clock });
const rotate = (value: string) => client.send(new PutSecretValueCommand({ SecretId: NAME, SecretString: value }));

/** A client of this SDK that fails every call, as Secrets Manager does when throttled or unreachable. */
function failingFrom(now: () => boolean) {
  client.middlewareStack.add(
    (next) => async (args) => {
      if (now()) throw Object.assign(new Error('Rate exceeded'), { name: 'ThrottlingException' });
      return next(args);
    },
    { step: 'initialize', name: 'throttle' },
  );
}

describe('the Secrets Manager key loader', () => {
  it('reads nothing until first used, then signs with AWSCURRENT and verifies with AWSCURRENT and AWSPREVIOUS', async () => {
    const key = container();
    expect(reads).toBe(0);
    await rotate('b'.repeat(64));
    expect(Buffer.from(await key()).toString()).toBe('b'.repeat(64));
    expect((await key.verificationKeys!()).map((k) => Buffer.from(k).toString())).toEqual(['b'.repeat(64), 'a'.repeat(64)]);
  });

  it('a secret never rotated (no AWSPREVIOUS) verifies with its one key', async () => {
    const key = container();
    expect((await key.verificationKeys!()).map((k) => Buffer.from(k).toString())).toEqual(['a'.repeat(64)]);
  });

  it('caches the keys for five minutes, then reads them again on the next use', async () => {
    const key = container();
    await key();
    await rotate('c'.repeat(64));
    const afterFirst = reads;
    clock += KEY_REFRESH_MS - 1;
    expect(Buffer.from(await key()).toString()).toBe('a'.repeat(64));
    expect(reads).toBe(afterFirst);
    clock += 1;
    expect(Buffer.from(await key()).toString()).toBe('c'.repeat(64));
    expect(reads).toBeGreaterThan(afterFirst);
  });

  it('a refresh that fails keeps the keys held, and is tried again', async () => {
    const key = container();
    await key();
    await rotate('d'.repeat(64));
    let down = true;
    failingFrom(() => down);
    clock += KEY_REFRESH_MS;
    expect(Buffer.from(await key()).toString()).toBe('a'.repeat(64));
    down = false;
    clock += MIN_FORCED_REFRESH_MS - 1;
    expect(Buffer.from(await key()).toString()).toBe('a'.repeat(64));
    clock += 1;
    expect(Buffer.from(await key()).toString()).toBe('d'.repeat(64));
  });

  it('a first read that fails fails the request, and the next request tries again', async () => {
    let down = true;
    failingFrom(() => down);
    const key = container();
    await expect(key()).rejects.toMatchObject({ name: 'ThrottlingException' });
    down = false;
    expect(Buffer.from(await key()).toString()).toBe('a'.repeat(64));
  });

  it('refuses a current version shorter than 32 bytes', async () => {
    await rotate('short');
    await expect(container()()).rejects.toThrow(`The secret ${NAME} must hold at least 32 bytes`);
  });

  it('stays one self-refreshing source inside the app (its cache is not wrapped in another that keeps the first key forever)', async () => {
    const key = container();
    expect(cachedServerKey(key)).toBe(key);
    let calls = 0;
    const plain: ServerKey = async () => {
      calls++;
      return new Uint8Array(32).fill(1);
    };
    const cached = cachedServerKey(plain);
    await cached();
    await cached();
    expect(calls).toBe(1);
  });
});

describe('sessions across a rotation', () => {
  it('a session id minted before the rotation still reads on a container that picked up the new key', async () => {
    const before = container();
    const id = (await mintSessionId(ELICITATION, OWNER, before))!;
    await rotate('e'.repeat(64));
    const after = container();
    expect(Buffer.from(await after()).toString()).toBe('e'.repeat(64));
    expect(await readSessionId(id, OWNER, after)).toEqual(ELICITATION);
  });

  it('a session id minted with the new key reads on a container still holding the old one (it reads the keys again, once)', async () => {
    const old = container();
    await old();
    await rotate('f'.repeat(64));
    const id = (await mintSessionId(ELICITATION, OWNER, container()))!;
    clock += MIN_FORCED_REFRESH_MS;
    expect(await readSessionId(id, OWNER, old)).toEqual(ELICITATION);
  });

  it('after two rotations, a session of the first key no longer reads (404 at the edge), and a forged id asks the source at most every 30 s', async () => {
    const first = container();
    const id = (await mintSessionId(ELICITATION, OWNER, first))!;
    await rotate('g'.repeat(64));
    await rotate('h'.repeat(64));
    const now = container();
    expect(await readSessionId(id, OWNER, now)).toBeUndefined();
    const afterOne = reads;
    expect(await readSessionId(id, OWNER, now)).toBeUndefined();
    expect(reads).toBe(afterOne);
  });

  it('another principal still cannot use the id, whichever key signed it', async () => {
    const key = container();
    const id = (await mintSessionId(ELICITATION, OWNER, key))!;
    await rotate('i'.repeat(64));
    expect(await readSessionId(id, 'someone-else', container())).toBeUndefined();
  });
});

describe('requestState across a rotation', () => {
  const expected = { ownerId: OWNER, tool: 'approve_deployment', argumentsHash: 'h', dialect: 'tasks-2026-07-28' as const };
  const open = (state: string, key: ServerKey) =>
    verifyWithKeys(
      key,
      (k) => openRequestState(state, k, expected, clock),
      (error) => error instanceof RequestStateError && error.problem === 'forged',
    );

  it('a requestState sealed before the rotation opens after it', async () => {
    const state = sealRequestState({ token: 'tok', ...expected, expiresAt: clock / 1000 + 600 }, await container()());
    await rotate('j'.repeat(64));
    await expect(open(state, container())).resolves.toMatchObject({ token: 'tok' });
  });

  it('a changed requestState is still "forged", and other failures are not retried with other keys', async () => {
    const key = container();
    const state = sealRequestState({ token: 'tok', ...expected, expiresAt: clock / 1000 + 600 }, await key());
    await rotate('k'.repeat(64));
    const tampered = state.replace(/\.[^.]+$/, '.AAAA');
    await expect(open(tampered, container())).rejects.toMatchObject({ problem: 'forged' });
    await expect(
      verifyWithKeys(
        container(),
        (k) => openRequestState(state, k, { ...expected, ownerId: 'other' }, clock),
        (e) => e instanceof RequestStateError && e.problem === 'forged',
      ),
    ).rejects.toMatchObject({ problem: 'other-principal' });
  });
});

it('the local Secrets Manager answers AWSPREVIOUS as the loader expects', async () => {
  await rotate('l'.repeat(64));
  await expect(client.send(new GetSecretValueCommand({ SecretId: NAME, VersionStage: 'AWSPREVIOUS' }))).resolves.toMatchObject({
    SecretString: 'a'.repeat(64),
  });
});
