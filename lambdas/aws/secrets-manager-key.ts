/**
 * The server's secret key, read from Secrets Manager on first use (a request that hands a
 * client integrity-protected state or checks one), never at module init; the client is
 * imported then too, so requests that never need the key never load it.
 *
 * A rotation must not break what clients hold: the versions labelled AWSCURRENT (signs)
 * and AWSPREVIOUS (still verifies) are read together, and read again when they are older
 * than the refresh interval, or when a state verifies with neither (it may be signed by a
 * container that picked up the new key first), at most once per {@link MIN_FORCED_REFRESH_MS}.
 * A refresh that fails keeps the keys held and is tried again shortly.
 */
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { ServerKey } from '../shared/server-key.ts';
import { DEPLOYED_CLIENT_CONFIG } from './aws-client-config.ts';

/** At least 256 bits: the key signs state with HMAC-SHA-256. */
export const MIN_SECRET_KEY_BYTES = 32;
/** How long keys read are used before they are read again. */
export const KEY_REFRESH_MS = 5 * 60_000;
/** A state no held key verifies reads the keys again at most this often. */
export const MIN_FORCED_REFRESH_MS = 30_000;
/** After a failed refresh, the held keys serve this long before the next try. */
const RETRY_AFTER_FAILURE_MS = 30_000;

export interface SecretsManagerKeyOptions {
  /** @default a client built from the environment, on first use */
  client?: SecretsManagerClient;
  /** @default KEY_REFRESH_MS */
  refreshMs?: number;
  /** @default Date.now */
  now?: () => number;
}

interface KeyRing {
  current: Uint8Array;
  previous?: Uint8Array;
}

/** The key in secret `secretId` (its SecretString, as the construct generates it), with its previous version. */
export function secretsManagerKey(secretId: string, options: SecretsManagerKeyOptions = {}): ServerKey {
  const refreshMs = options.refreshMs ?? KEY_REFRESH_MS;
  const now = options.now ?? Date.now;
  let client = options.client;
  let held: { ring: KeyRing; readAt: number; retryAt: number } | undefined;
  let reading: Promise<KeyRing> | undefined;

  const read = (): Promise<KeyRing> =>
    (reading ??= (async () => {
      try {
        client ??= await newClient();
        const ring = await readRing(secretId, client);
        held = { ring, readAt: now(), retryAt: now() + refreshMs };
        return ring;
      } catch (error) {
        if (!held) throw error;
        held.retryAt = now() + RETRY_AFTER_FAILURE_MS;
        return held.ring;
      } finally {
        reading = undefined;
      }
    })());

  const ring = async (fresh = false): Promise<KeyRing> => {
    if (!held) return read();
    if (now() >= held.retryAt || (fresh && now() - held.readAt >= MIN_FORCED_REFRESH_MS)) return read();
    return held.ring;
  };

  const key: ServerKey = async () => (await ring()).current;
  key.verificationKeys = async (asked) => {
    const { current, previous } = await ring(asked?.fresh === true);
    return previous ? [current, previous] : [current];
  };
  return key;
}

async function newClient(): Promise<SecretsManagerClient> {
  const { SecretsManagerClient } = await import('@aws-sdk/client-secrets-manager');
  // Bounded like the other deployed clients: a hung read fails (and the held keys serve on) instead of holding the request.
  return new SecretsManagerClient(DEPLOYED_CLIENT_CONFIG);
}

async function readRing(secretId: string, client: SecretsManagerClient): Promise<KeyRing> {
  const { GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
  const version = (stage: string) => client.send(new GetSecretValueCommand({ SecretId: secretId, VersionStage: stage }));
  const [current, previous] = await Promise.all([
    version('AWSCURRENT'),
    // A secret never rotated has no previous version.
    version('AWSPREVIOUS').catch((error: unknown) => {
      if ((error as { name?: string }).name === 'ResourceNotFoundException') return undefined;
      throw error;
    }),
  ]);
  const currentKey = keyOf(current);
  if (!currentKey || currentKey.byteLength < MIN_SECRET_KEY_BYTES) {
    throw new Error(`The secret ${secretId} must hold at least ${MIN_SECRET_KEY_BYTES} bytes`);
  }
  const previousKey = previous && keyOf(previous);
  // A previous version too short to be a key never verifies anything.
  return previousKey && previousKey.byteLength >= MIN_SECRET_KEY_BYTES ? { current: currentKey, previous: previousKey } : { current: currentKey };
}

function keyOf(out: { SecretString?: string; SecretBinary?: Uint8Array }): Uint8Array | undefined {
  const key = out.SecretString !== undefined ? Buffer.from(out.SecretString, 'utf8') : out.SecretBinary;
  return key && new Uint8Array(key);
}
