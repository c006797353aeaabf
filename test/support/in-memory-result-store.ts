/** A {@link ResultStore} in memory, for unit tests. */
import type { ResultStore, StoredResult } from '../../lambdas/operations/result-store.ts';

export class InMemoryResultStore implements ResultStore {
  readonly objects = new Map<string, StoredResult>();

  async put(key: string, result: StoredResult): Promise<void> {
    this.objects.set(key, { body: new Uint8Array(result.body), contentType: result.contentType });
  }

  async get(key: string): Promise<StoredResult | undefined> {
    const stored = this.objects.get(key);
    return stored && { body: new Uint8Array(stored.body), contentType: stored.contentType };
  }
}
