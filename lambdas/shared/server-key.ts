/**
 * The server's secret key as the edge uses it: the current key signs (session ids,
 * requestState); the current and the previous key verify, so state signed just before a
 * rotation, or by a container that has already picked up the new key, stays valid.
 */

/** The current key; a rotating source also gives every key that may verify. */
export interface ServerKey {
  (): Promise<Uint8Array>;
  /**
   * The keys that verify, current first. `fresh` asks the source to look again (a state
   * that verified with none of them may be signed by a key this container has not seen
   * yet); the source bounds how often it does.
   */
  verificationKeys?(options?: { fresh?: boolean }): Promise<readonly Uint8Array[]>;
}

/**
 * `key` cached for the process: a plain loader is called once (a failure is not cached,
 * so the next request tries again); a rotating source caches and refreshes on its own.
 */
export function cachedServerKey(key: ServerKey): ServerKey {
  if (key.verificationKeys) return key;
  let pending: Promise<Uint8Array> | undefined;
  return () => {
    pending ??= key().catch((error: unknown) => {
      pending = undefined;
      throw error;
    });
    return pending;
  };
}

/**
 * `verify(key)` with each key that may verify, current first: the first that succeeds
 * answers. A failure `isWrongKey` does not recognise is thrown at once; when every key is
 * wrong, the source is asked once for fresh keys, and the last failure is thrown.
 */
export async function verifyWithKeys<T>(secretKey: ServerKey, verify: (key: Uint8Array) => T, isWrongKey: (error: unknown) => boolean): Promise<T> {
  const tried: Uint8Array[] = [];
  let failure: unknown;
  const attempt = (keys: readonly Uint8Array[]): { ok: true; value: T } | undefined => {
    for (const key of keys) {
      if (tried.some((seen) => Buffer.from(seen).equals(key))) continue;
      tried.push(key);
      try {
        return { ok: true, value: verify(key) };
      } catch (error) {
        if (!isWrongKey(error)) throw error;
        failure = error;
      }
    }
    return undefined;
  };
  const first = attempt(secretKey.verificationKeys ? await secretKey.verificationKeys() : [await secretKey()]);
  if (first) return first.value;
  if (secretKey.verificationKeys) {
    const fresh = attempt(await secretKey.verificationKeys({ fresh: true }));
    if (fresh) return fresh.value;
  }
  throw failure;
}
