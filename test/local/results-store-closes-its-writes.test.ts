/**
 * The local results store removes its temporary directory on close. A request whose socket
 * the close cut may still be writing: its write, reaching the file system after the removal,
 * made the directory again, and a test run left it behind. The guarded store's writes close
 * first: those under way are waited for, and any later one is refused without touching disk.
 */
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { guardS3rverStore, type S3rverFilesystemStore } from '../../local/s3/s3rver-store-guard.ts';

let directory: string | undefined;
afterEach(async () => {
  if (directory) await rm(directory, { recursive: true, force: true });
});

/** A store whose putMetadata makes its folder, as s3rver's does, and waits for `release` first. */
function storeIn(folder: string, release: Promise<void>): S3rverFilesystemStore {
  return {
    getResourcePath: (bucket, key) => join(folder, bucket, key ?? ''),
    putMetadata: async () => {
      await release;
      await mkdir(join(folder, 'bucket'), { recursive: true });
    },
    putObject: async () => ({ size: 0, md5: '' }),
    copyObject: async () => undefined,
    initiateUpload: async () => undefined,
  };
}

describe('the local results store closing', () => {
  it('waits for a write under way before its directory is removed, and refuses a later write without making the directory again', async () => {
    directory = await mkdtemp(join(tmpdir(), 'async-mcp-results-close-'));
    const folder = join(directory, 'results');
    let release!: () => void;
    const store = storeIn(folder, new Promise<void>((done) => (release = done)));
    const writes = guardS3rverStore(store);

    const underWay = store.putMetadata('bucket', 'key', {});
    let closed = false;
    const closing = writes.close().then(() => (closed = true));
    await new Promise((tick) => setImmediate(tick));
    expect(closed).toBe(false);
    release();
    await underWay;
    await closing;
    // What the close then removes stays removed.
    await rm(folder, { recursive: true, force: true });
    await expect(store.putMetadata('bucket', 'late', {})).rejects.toThrow(/closed/);
    expect(existsSync(folder)).toBe(false);
  });
});
