/** The lock file that lets one process at a time renew a login: exclusive, and broken when abandoned. */
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withFileLock } from '../../client/stores/file-lock.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'async-mcp-file-lock-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('withFileLock', () => {
  it('runs the work of two holders one after the other, never together, and removes the lock after', async () => {
    const lock = join(dir, 'serial.lock');
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstHolds = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = withFileLock(lock, async () => {
      events.push('first in');
      await firstHolds;
      events.push('first out');
    });
    // The second asks while the first holds the lock.
    while (!events.includes('first in')) await new Promise((resolve) => setImmediate(resolve));
    const second = withFileLock(lock, async () => {
      events.push('second in');
      events.push('second out');
    });
    await new Promise((resolve) => setTimeout(resolve, 120));
    releaseFirst();
    await Promise.all([first, second]);
    expect(events).toEqual(['first in', 'first out', 'second in', 'second out']);
    expect(existsSync(lock)).toBe(false);
  });

  it('breaks a lock left behind by a process that died holding it', async () => {
    const lock = join(dir, 'abandoned.lock');
    await writeFile(lock, '999999 gone\n');
    const anHourAgo = new Date(Date.now() - 3_600_000);
    await utimes(lock, anHourAgo, anHourAgo);
    expect(await withFileLock(lock, async () => 'ran')).toBe('ran');
    expect(existsSync(lock)).toBe(false);
  });

  it('a holder whose lock was broken as stale leaves the new holder’s lock in place', async () => {
    const lock = join(dir, 'outlived.lock');
    await withFileLock(lock, async () => {
      // Meanwhile another process judged this lock abandoned and took its own.
      await rm(lock);
      await writeFile(lock, 'another holder\n');
    });
    expect(await readFile(lock, 'utf8')).toBe('another holder\n');
  });

  it('a work that throws still gives the lock back', async () => {
    const lock = join(dir, 'throws.lock');
    await expect(withFileLock(lock, async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(existsSync(lock)).toBe(false);
  });
});
