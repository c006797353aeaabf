/**
 * s3rver as S3 behaves, where our results depend on it: a key longer than S3's 1,024
 * UTF-8 bytes is refused with S3's KeyTooLongError (400), and a write the file system
 * refuses (a file name too long, a full disk) goes back to the caller as an error.
 * s3rver's own writes leave the file stream's 'error' event unhandled, which ends the
 * whole process: one long key from a client once stopped the local server.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, type FileHandle } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

/** S3's limit on an object key, in UTF-8 bytes. */
export const MAX_S3_KEY_BYTES = 1024;

/** What the guard uses of s3rver's FilesystemStore. */
export interface S3rverFilesystemStore {
  getResourcePath(bucket: string, key: string | undefined, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: Record<string, unknown>, md5?: string): Promise<void>;
  putObject(object: S3rverObject): Promise<{ size: number; md5: string }>;
  copyObject(srcBucket: string, srcKey: string, destBucket: string, destKey: string, metadata?: unknown): Promise<unknown>;
  initiateUpload(bucket: string, key: string, uploadId: string, metadata: unknown): Promise<void>;
}

interface S3rverObject {
  bucket: string;
  key: string;
  content: Readable | Buffer;
  metadata: Record<string, unknown>;
}

type S3ErrorClass = new (code: string, message: string, detail?: Record<string, unknown>) => Error;

// s3rver's error type: what its error handler turns into S3's XML answer with the code's status.
const S3Error = createRequire(import.meta.url)('s3rver/lib/models/error.js') as S3ErrorClass;

/** The guarded store's writes, closed before its directory is removed. */
export interface GuardedStoreWrites {
  /** Refuses every write from now on and waits for those under way, which could otherwise make the removed directory again. */
  close(): Promise<void>;
}

/** The store methods that make files or folders: a write still under way when the server closes would make them again. */
const WRITES = ['putObject', 'copyObject', 'initiateUpload', 'putPart', 'putMetadata'] as const;

/** Makes `store`'s writes refuse keys S3 refuses and report write failures instead of crashing. */
export function guardS3rverStore(store: S3rverFilesystemStore): GuardedStoreWrites {
  guardKeysAndFailures(store);
  return gateWrites(store as unknown as Record<string, unknown>);
}

function gateWrites(store: Record<string, unknown>): GuardedStoreWrites {
  const underWay = new Set<Promise<unknown>>();
  let closed = false;
  for (const name of WRITES) {
    const write = store[name];
    if (typeof write !== 'function') continue;
    store[name] = (...args: unknown[]) => {
      if (closed) return Promise.reject(new S3Error('ServiceUnavailable', 'The local results store is closed'));
      const written = Promise.resolve(write.apply(store, args));
      underWay.add(written);
      written.then(
        () => underWay.delete(written),
        () => underWay.delete(written),
      );
      return written;
    };
  }
  return {
    async close() {
      closed = true;
      await Promise.allSettled([...underWay]);
    },
  };
}

function guardKeysAndFailures(store: S3rverFilesystemStore): void {
  const copyObject = store.copyObject.bind(store);
  const initiateUpload = store.initiateUpload.bind(store);
  store.putObject = async (object) => {
    if (tooLong(object.key)) {
      // S3 answers once the body is read; answering before would reset the client's upload.
      if (!Buffer.isBuffer(object.content)) await drain(object.content);
      throw keyTooLong(object.key);
    }
    return writeObject(store, object);
  };
  store.copyObject = async (srcBucket, srcKey, destBucket, destKey, metadata) => {
    if (tooLong(destKey)) throw keyTooLong(destKey);
    return copyObject(srcBucket, srcKey, destBucket, destKey, metadata);
  };
  store.initiateUpload = async (bucket, key, uploadId, metadata) => {
    if (tooLong(key)) throw keyTooLong(key);
    return initiateUpload(bucket, key, uploadId, metadata);
  };
}

const tooLong = (key: string) => Buffer.byteLength(key, 'utf8') > MAX_S3_KEY_BYTES;

function keyTooLong(key: string): Error {
  return new S3Error('KeyTooLongError', 'Your key is too long', { Size: Buffer.byteLength(key, 'utf8'), MaxSizeAllowed: MAX_S3_KEY_BYTES });
}

async function drain(content: Readable): Promise<void> {
  for await (const chunk of content) void chunk;
}

/** s3rver's putObject with every stream's errors awaited: same files, same answer. */
async function writeObject(store: S3rverFilesystemStore, object: S3rverObject): Promise<{ size: number; md5: string }> {
  const objectPath = store.getResourcePath(object.bucket, object.key, 'object');
  const source = Buffer.isBuffer(object.content) ? Readable.from([object.content]) : object.content;
  let file: FileHandle;
  try {
    // Opened before the body is piped, so a file that cannot be made (its name too long) fails
    // with the request still whole: the body is read and the client gets the error answer.
    await mkdir(dirname(objectPath), { recursive: true });
    file = await open(objectPath, 'w');
  } catch (error) {
    await drain(source);
    throw error;
  }
  const md5 = createHash('md5');
  let size = 0;
  const measure = new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      md5.update(chunk);
      size += chunk.length;
      callback(null, chunk);
    },
  });
  await pipeline(source, measure, file.createWriteStream());
  const digest = md5.digest('hex');
  await store.putMetadata(object.bucket, object.key, object.metadata, digest);
  return { size, md5: digest };
}
