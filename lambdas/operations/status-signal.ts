/**
 * A wake-up signal for whoever watches operation records in this process: a status
 * change written here wakes them at once, instead of at their next read. Only a
 * process that writes the changes it watches gets one (the local stack, where
 * status-sync runs beside the MCP endpoint); in AWS status-sync is another function,
 * so watchers get none and read at their interval.
 */
import type { RecordStore } from './ports.ts';

/** Tells watchers that some record changed; it says not which, so each re-reads its own. */
export interface StatusSignal {
  /** Calls `listener` after each change until the returned function is called. */
  subscribe(listener: () => void): () => void;
  notify(): void;
}

/** An in-process signal; a listener that throws never stops the others. */
export function createStatusSignal(): StatusSignal {
  const listeners = new Set<() => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    notify() {
      for (const listener of [...listeners]) {
        try {
          listener();
        } catch {
          // A watcher's failure is its own; the change is still signalled to the rest.
        }
      }
    },
  };
}

/** `store`, signalling after every conditional status write that took effect. */
export function signallingRecordStore(store: RecordStore, signal: StatusSignal): RecordStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'transition') {
        return async (...args: Parameters<RecordStore['transition']>) => {
          const updated = await target.transition(...args);
          if (updated) signal.notify();
          return updated;
        };
      }
      const value: unknown = Reflect.get(target, property, target);
      // Bound to the store itself: adapters keep their clients in private fields.
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
