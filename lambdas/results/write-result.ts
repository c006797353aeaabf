/**
 * For workers whose result is too large for a state's output (256 KB): store the bytes
 * in the results bucket and return a CallToolResult holding a `resource_link` to them,
 * which the client reads with `resources/read`. The object is keyed by the operation's
 * owner, so only that principal can read it, and only while the operation lives.
 */
import { contextSlot } from '../shared/context-slot.ts';
import { lazyS3ResultStore } from '../aws/lazy-s3-result-store.ts';
import { ENV } from '../handlers/environment.ts';
import { mintId } from '../operations/fingerprint.ts';
import { resultIdFor, resultKeyFor, resultUriFor, type ResultStore } from '../operations/result-store.ts';

/** The `operation` field of a worker's execution input: whose result this is. */
export interface ResultOwner {
  ownerId: string;
  token: string;
}

export interface WriteResultOptions {
  /** The media type of `body`, e.g. `text/csv`. */
  mimeType: string;
  /** The link's name, e.g. a file name. */
  name: string;
  description?: string;
}

/** The shape of a CallToolResult with one `resource_link`. */
export interface ResourceLinkResult {
  content: Array<{ type: 'resource_link'; uri: string; name: string; mimeType: string; size: number; description?: string }>;
}

const scopedStore = contextSlot<ResultStore>('result store');
let bucketStore: ResultStore | undefined;

/** Runs `fn` with `store` as the results store (the local runtime runs workers in-process this way). */
export function withResultStore<T>(store: ResultStore, fn: () => T): T {
  return scopedStore.run(store, fn);
}

/** Stores `body` as `owner`'s result and returns the CallToolResult that links to it. */
export async function writeResult(owner: ResultOwner, body: string | Uint8Array, options: WriteResultOptions): Promise<ResourceLinkResult> {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  const resultId = resultIdFor(owner.token, mintId(), 'worker');
  await currentStore().put(resultKeyFor(owner.ownerId, resultId), { body: bytes, contentType: options.mimeType });
  return {
    content: [
      {
        type: 'resource_link',
        uri: resultUriFor(resultId),
        name: options.name,
        mimeType: options.mimeType,
        size: bytes.byteLength,
        ...(options.description === undefined ? {} : { description: options.description }),
      },
    ],
  };
}

function currentStore(): ResultStore {
  const scoped = scopedStore.getStore();
  if (scoped) return scoped;
  const bucketName = process.env[ENV.resultsBucket];
  if (!bucketName) throw new Error(`Environment variable ${ENV.resultsBucket} is required to write large results`);
  // One client per container, built on first use.
  bucketStore ??= lazyS3ResultStore(bucketName);
  return bucketStore;
}
