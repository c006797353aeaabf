/**
 * The results bucket on one machine: s3rver serves the S3 API on a free port of 127.0.0.1
 * (whatever the server's `--host`: s3rver's key is fixed and public, so only this machine's
 * processes may reach it), so the server and the workers run the same S3 client code as in AWS. Objects live in
 * a temporary directory removed on close, or under the data directory across restarts.
 * Writes are guarded (see s3/s3rver-store-guard.ts): keys past S3's 1,024 bytes are
 * refused as S3 refuses them, and no write failure ends the process.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import type { Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no type declarations; only its constructor, run(), close() and store are used.
import S3rver from 's3rver';
import { S3ResultStore } from '../../lambdas/aws/s3-result-store.ts';
import { guardS3rverStore, type S3rverFilesystemStore } from './s3rver-store-guard.ts';

/** s3rver checks signatures against its own fixed key pair. */
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const BUCKET = 'async-mcp-results';

export interface LocalResults {
  endpoint: string;
  bucketName: string;
  client: S3Client;
  store: S3ResultStore;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<{ address: string; port: number }>;
  close(): Promise<void>;
  httpServer?: Server;
  store: S3rverFilesystemStore;
}

export interface LocalResultsOptions {
  /** @deprecated Not used: the bucket always listens on 127.0.0.1, whatever the server's `--host`. */
  host?: string;
  /** Keep the objects here across restarts; a temporary directory when absent. */
  dataDir?: string;
  /** @default 'async-mcp-results' */
  bucketName?: string;
}

/** Starts s3rver on a free loopback port with the results bucket; objects under `dataDir` when given. */
export async function startLocalResults(options: LocalResultsOptions = {}): Promise<LocalResults> {
  const bucket = options.bucketName ?? BUCKET;
  const temporary = options.dataDir === undefined;
  const directory = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'async-mcp-results-')));
  await mkdir(directory, { recursive: true });
  const server = new (S3rver as new (options: Record<string, unknown>) => S3rverInstance)({
    address: '127.0.0.1',
    port: 0,
    silent: true,
    directory,
    configureBuckets: [{ name: bucket }],
  });
  // S3's key limit, and write failures answered instead of ending the process.
  const writes = guardS3rverStore(server.store);
  const { address, port } = await server.run();
  const endpoint = `http://${address}:${port}`;
  const client = new S3Client({ region: 'us-east-1', endpoint, forcePathStyle: true, credentials: S3RVER_CREDENTIALS });
  return {
    endpoint,
    bucketName: bucket,
    client,
    store: new S3ResultStore({ client, bucketName: bucket }),
    async close() {
      client.destroy();
      // Idle keep-alive sockets would hold close() open.
      server.httpServer?.closeAllConnections();
      try {
        await server.close();
      } finally {
        // A request whose socket was just closed may still be writing: it would make the directory again after its removal.
        await writes.close();
        if (temporary) await rm(directory, { recursive: true, force: true });
      }
    },
  };
}
