/**
 * The local server's secret key: 32 random bytes in the data directory (created on first
 * use, readable by the owner only), so state handed to clients stays valid across restarts;
 * without a data directory, a key for this process only.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

const KEY_BYTES = 32;

export function localSecretKey(file?: string): () => Promise<Uint8Array> {
  if (file === undefined) {
    const key = randomBytes(KEY_BYTES);
    return async () => key;
  }
  return async () => {
    try {
      const existing = await readFile(file);
      if (existing.byteLength >= KEY_BYTES) return existing;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    await mkdir(dirname(file), { recursive: true });
    const key = randomBytes(KEY_BYTES);
    // 'wx': two servers starting on one data directory keep the first key.
    await writeFile(file, key, { mode: 0o600, flag: 'wx' }).catch(async (error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST') throw error;
    });
    return readFile(file);
  };
}
