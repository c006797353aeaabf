/**
 * Watches the tools and workers folders for `npm start -- --watch`: every save under them,
 * collected until the folders have been quiet for a moment (an editor's save is often several
 * writes and renames), is handed over as one batch of changed paths. Batches never overlap: one
 * that arrives while the last is still being handled waits for it.
 */
import { type FSWatcher, statSync, watch } from 'node:fs';
import { resolve, sep } from 'node:path';

/** The options of {@link watchToolFiles}. */
export interface ToolWatcherOptions {
  /** How long the folders must be quiet before a batch is handed over. @default 150 */
  quietMs?: number;
  /** Told when a folder cannot be watched, or when `onChange` throws. @default console.error */
  onError?: (message: string) => void;
}

/** A running watch; `close` stops it, and waits for a batch being handled. */
export interface ToolWatcher {
  close(): Promise<void>;
}

/**
 * Calls `onChange` with the absolute paths changed under `folders` (recursively), once a burst of
 * saves is over. Folders that do not exist are reported through `onError` and skipped.
 */
export function watchToolFiles(folders: readonly string[], onChange: (paths: string[]) => Promise<void>, options: ToolWatcherOptions = {}): ToolWatcher {
  const quietMs = options.quietMs ?? 150;
  const onError = options.onError ?? ((message: string) => console.error(message));
  const pending = new Set<string>();
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let closed = false;

  const flush = () => {
    timer = undefined;
    const paths = [...pending];
    pending.clear();
    running = running.then(() =>
      closed ? undefined : onChange(paths).catch((error: unknown) => onError(`Reload failed: ${(error as Error).message ?? String(error)}`)),
    );
  };
  const watchers: FSWatcher[] = [];
  // A folder inside another is watched once, through the outer one.
  const roots = [...new Set(folders.map((folder) => resolve(folder)))].filter(
    (folder, _, all) => !all.some((other) => other !== folder && folder.startsWith(`${other}${sep}`)),
  );
  for (const root of roots) {
    try {
      // Node 20's recursive watch throws for a missing folder; Node 24's watches nothing, silently.
      statSync(root);
      const watcher = watch(root, { recursive: true }, (_event, name) => {
        if (closed) return;
        pending.add(name ? resolve(root, name.toString()) : root);
        clearTimeout(timer);
        timer = setTimeout(flush, quietMs);
      });
      watcher.on('error', (error) => onError(`Stopped watching ${root}: ${error.message}`));
      watchers.push(watcher);
    } catch (error) {
      onError(`Cannot watch ${root}: ${(error as Error).message}`);
    }
  }
  return {
    async close() {
      closed = true;
      clearTimeout(timer);
      for (const watcher of watchers) watcher.close();
      await running;
    },
  };
}
