/**
 * The S3 result store, loaded on first use: only large results need it, so a cold start
 * does not pay for importing the S3 client (about 200 ms of module init). Its attempts are
 * bounded like DynamoDB's: a hung S3 fails the call instead of holding it to the timeout
 * (the bound is on an idle socket, so a large result still streams).
 */
import type { ResultStore } from '../operations/result-store.ts';
import { DEPLOYED_CLIENT_CONFIG } from './aws-client-config.ts';

export function lazyS3ResultStore(bucketName: string): ResultStore {
  let loaded: Promise<ResultStore> | undefined;
  const store = () =>
    (loaded ??= Promise.all([import('@aws-sdk/client-s3'), import('./s3-result-store.ts')]).then(
      ([{ S3Client }, { S3ResultStore }]) => new S3ResultStore({ client: new S3Client(DEPLOYED_CLIENT_CONFIG), bucketName }),
    ));
  return {
    put: async (key, result) => (await store()).put(key, result),
    get: async (key) => (await store()).get(key),
  };
}
