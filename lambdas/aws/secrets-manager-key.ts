/**
 * The server's secret key, read from Secrets Manager: once per container, on first use
 * (a request that hands a client integrity-protected state), never at module init. The
 * client is imported then too, so requests that never need the key never load it.
 */

/** At least 256 bits: the key signs state with HMAC-SHA-256. */
export const MIN_SECRET_KEY_BYTES = 32;

/** A loader for the key in secret `secretId` (its SecretString, as the construct generates it). */
export function secretsManagerKey(secretId: string): () => Promise<Uint8Array> {
  return async () => {
    const { SecretsManagerClient, GetSecretValueCommand } = await import('@aws-sdk/client-secrets-manager');
    const out = await new SecretsManagerClient({}).send(new GetSecretValueCommand({ SecretId: secretId }));
    const key = out.SecretString !== undefined ? Buffer.from(out.SecretString, 'utf8') : out.SecretBinary;
    if (!key || key.byteLength < MIN_SECRET_KEY_BYTES) {
      throw new Error(`The secret ${secretId} must hold at least ${MIN_SECRET_KEY_BYTES} bytes`);
    }
    return new Uint8Array(key);
  };
}
