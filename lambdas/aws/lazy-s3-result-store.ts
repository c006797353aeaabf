/**
 * The S3 result store, loaded on first use: only large results need it, so a cold start
 * does not pay for importing the S3 client (about 200 ms of module init).
 */
import type { ResultStore } from '../operations/result-store.ts';

export function lazyS3ResultStore(bucketName: string): ResultStore {
  let loaded: Promise<ResultStore> | undefined;
  const store = () =>
    (loaded ??= Promise.all([import('@aws-sdk/client-s3'), import('./s3-result-store.ts')]).then(
      ([{ S3Client }, { S3ResultStore }]) => new S3ResultStore({ client: new S3Client({}), bucketName }),
    ));
  return {
    put: async (key, result) => (await store()).put(key, result),
    get: async (key) => (await store()).get(key),
  };
}
