/**
 * The {@link ResultStore} over S3: one object per result in the results bucket. The
 * bucket's lifecycle rule deletes objects once no operation can still name them; the
 * core checks the operation's own keepAlive on every read.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import type { ResultStore, StoredResult } from '../operations/result-store.ts';

export interface S3ResultStoreOptions {
  client: S3Client;
  bucketName: string;
}

/** The S3 commands, imported when first needed: a bundle that imports this module then does not load the S3 client at init. */
const s3 = () => import('@aws-sdk/client-s3');

export class S3ResultStore implements ResultStore {
  constructor(private readonly options: S3ResultStoreOptions) {}

  async put(key: string, result: StoredResult): Promise<void> {
    const { PutObjectCommand } = await s3();
    await this.options.client.send(new PutObjectCommand({ Bucket: this.options.bucketName, Key: key, Body: result.body, ContentType: result.contentType }));
  }

  async get(key: string): Promise<StoredResult | undefined> {
    const { GetObjectCommand, NoSuchKey } = await s3();
    try {
      const answer = await this.options.client.send(new GetObjectCommand({ Bucket: this.options.bucketName, Key: key }));
      if (!answer.Body) return undefined;
      return { body: await answer.Body.transformToByteArray(), contentType: answer.ContentType ?? 'application/octet-stream' };
    } catch (error) {
      if (error instanceof NoSuchKey || (error as { name?: string }).name === 'NoSuchKey') return undefined;
      throw error;
    }
  }
}
