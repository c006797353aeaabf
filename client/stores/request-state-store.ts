/**
 * Where handles live between processes: python-sdk PR #1209's RequestStateManager. Four
 * methods over JSON documents keyed by the handle id, so any key-value store fits (a Redis
 * store is `SET`/`GET`/`DEL` on `prefix + id` plus `SCAN` for `list`).
 */
import type { StoredCall } from '../call-handle.ts';

export interface RequestStateStore {
  /** Creates or replaces the entry for `entry.handle.id`. */
  put(entry: StoredCall): Promise<void>;
  get(id: string): Promise<StoredCall | undefined>;
  /** Every entry, newest first. */
  list(): Promise<StoredCall[]>;
  delete(id: string): Promise<void>;
}

/** Handle ids are ours (random UUIDs); anything else is refused before it can name a file or key. */
export function assertHandleId(id: string): void {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(id)) throw new Error(`Not a call id: ${JSON.stringify(id.slice(0, 140))}`);
}

export function newestFirst(entries: StoredCall[]): StoredCall[] {
  return entries.sort((a, b) => b.handle.createdAt.localeCompare(a.handle.createdAt));
}
