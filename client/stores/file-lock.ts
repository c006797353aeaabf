/**
 * A lock between processes on one machine: a file created exclusively (`O_EXCL`) beside what
 * it guards, removed when the work is done. A lock older than `staleMs` is taken to belong to
 * a process that died holding it, and is broken.
 */
import { randomBytes } from 'node:crypto';
import { link, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';

export interface FileLockOptions {
  /** A lock held longer than this is broken. @default 30 s */
  staleMs?: number;
  /** How often a waiting process looks again. @default 50 ms */
  retryMs?: number;
}

/** The default age after which a lock is taken to be abandoned. */
export const DEFAULT_STALE_LOCK_MS = 30_000;

/** Runs `work` while holding the lock file `path`, waiting for another holder to finish first. */
export async function withFileLock<T>(path: string, work: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const staleMs = options.staleMs ?? DEFAULT_STALE_LOCK_MS;
  const retryMs = options.retryMs ?? 50;
  const owner = `${process.pid} ${randomBytes(8).toString('hex')}\n`;
  for (;;) {
    try {
      await writeFile(path, owner, { flag: 'wx', mode: 0o600 });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const held = await stat(path).catch(() => undefined);
    if (held && Date.now() - held.mtimeMs > staleMs) await breakStale(path, held.ino);
    else if (held) await new Promise((resolve) => setTimeout(resolve, retryMs));
  }
  try {
    return await work();
  } finally {
    // Only our own lock: a holder that outlived staleMs may have lost it to another process.
    if ((await readFile(path, 'utf8').catch(() => undefined)) === owner) await rm(path, { force: true });
  }
}

/**
 * Moves the stale lock aside (rename is atomic: of several waiters, one wins). A waiter that
 * judged an older lock stale may have moved a fresh one taken since: it is put back.
 */
async function breakStale(path: string, staleIno: number): Promise<void> {
  const aside = `${path}.${randomBytes(6).toString('hex')}.stale`;
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const moved = await stat(aside).catch(() => undefined);
  if (moved && moved.ino !== staleIno) await link(aside, path).catch(() => undefined);
  await rm(aside, { force: true });
}
