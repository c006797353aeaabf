/** A RequestStateStore in memory: for tests and for processes that never need to rejoin after exit. */
import type { StoredCall } from '../call-handle.ts';
import { assertHandleId, newestFirst, type RequestStateStore } from './request-state-store.ts';

export class MemoryRequestStateStore implements RequestStateStore {
  private readonly entries = new Map<string, string>();

  async put(entry: StoredCall): Promise<void> {
    assertHandleId(entry.handle.id);
    // Stored as JSON, so callers never share mutable state with the store, as with any real store.
    this.entries.set(entry.handle.id, JSON.stringify(entry));
  }

  async get(id: string): Promise<StoredCall | undefined> {
    assertHandleId(id);
    const text = this.entries.get(id);
    return text === undefined ? undefined : (JSON.parse(text) as StoredCall);
  }

  async list(): Promise<StoredCall[]> {
    return newestFirst([...this.entries.values()].map((text) => JSON.parse(text) as StoredCall));
  }

  async delete(id: string): Promise<void> {
    assertHandleId(id);
    this.entries.delete(id);
  }
}
