/**
 * The local results bucket answers as S3 does where keys are concerned: a key over
 * 1,024 UTF-8 bytes is refused with KeyTooLongError (400), and a write the file system
 * cannot make is an error to the caller, never the end of the process.
 */
import { GetObjectCommand, PutObjectCommand, S3ServiceException } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startLocalResults, type LocalResults } from '../../local/s3/local-results.ts';

let results: LocalResults;

beforeAll(async () => {
  results = await startLocalResults({ host: '127.0.0.1' });
});
afterAll(async () => {
  await results?.close();
});

async function put(key: string, body: string | Uint8Array = 'payload') {
  return results.client.send(new PutObjectCommand({ Bucket: results.bucketName, Key: key, Body: body, ContentType: 'text/plain' }));
}

async function failureOf(promise: Promise<unknown>): Promise<S3ServiceException> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(S3ServiceException);
  return error as S3ServiceException;
}

describe('object keys', () => {
  it('a key of exactly 1,024 UTF-8 bytes is stored and read back (in segments the file system can name)', async () => {
    // File names are at most 255 bytes, so the key is in segments; S3 counts the whole key.
    const head = `${['鍵'.repeat(80), ...Array.from({ length: 5 }, () => 'a'.repeat(150))].join('/')}/`;
    const padded = head + 'k'.repeat(1024 - Buffer.byteLength(head));
    expect(Buffer.byteLength(padded)).toBe(1024);
    await put(padded, 'at the limit');
    expect(await results.store.get(padded)).toEqual({ body: new TextEncoder().encode('at the limit'), contentType: 'text/plain' });
  });

  it('a key of 1,025 bytes is refused with KeyTooLongError, status 400, as S3 refuses it', async () => {
    const error = await failureOf(put('k'.repeat(1025)));
    expect(error.name).toBe('KeyTooLongError');
    expect(error.$metadata.httpStatusCode).toBe(400);
    expect(error.message).toBe('Your key is too long');
  });

  it('256 CJK characters (768 bytes, 1,088 once base64url-encoded in a key) are refused the same way, with a body streamed', async () => {
    const key = `results/${'0'.repeat(32)}/${Buffer.from('長'.repeat(256)).toString('base64url')}.x`;
    expect(Buffer.byteLength(key)).toBeGreaterThan(1024);
    const error = await failureOf(put(key, new Uint8Array(200_000).fill(120)));
    expect(error.name).toBe('KeyTooLongError');
  });

  it('a key S3 accepts but the file system cannot name (one segment over 255 bytes) fails to the caller, and the store still serves', async () => {
    const error = await failureOf(put(`results/${'n'.repeat(400)}`));
    expect(error.$metadata.httpStatusCode).toBe(500);
    expect(error.name).toBe('InternalError');
    await put('results/after-the-failure', 'still here');
    const read = await results.client.send(new GetObjectCommand({ Bucket: results.bucketName, Key: 'results/after-the-failure' }));
    expect(await read.Body!.transformToString()).toBe('still here');
  });
});
