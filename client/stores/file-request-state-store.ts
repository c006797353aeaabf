/**
 * The default RequestStateStore: one JSON file per handle, readable only by the user, under
 * `ASYNC_MCP_STATE_DIR`, else the user's state directory (`$XDG_STATE_HOME/async-mcp`,
 * `~/.local/state/async-mcp`; `~/Library/Application Support/async-mcp` on macOS;
 * `%LOCALAPPDATA%\async-mcp` on Windows). Writes are atomic (a temporary file, then rename).
 */
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { StoredCall } from '../call-handle.ts';
import { assertHandleId, newestFirst, type RequestStateStore } from './request-state-store.ts';

export const STATE_DIR_ENV = 'ASYNC_MCP_STATE_DIR';

/** Where the file store keeps handles when not told otherwise. */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): string {
  if (env[STATE_DIR_ENV]) return env[STATE_DIR_ENV];
  if (platform === 'win32') return join(env.LOCALAPPDATA ?? join(homedir(), 'AppData', 'Local'), 'async-mcp');
  if (platform === 'darwin') return join(homedir(), 'Library', 'Application Support', 'async-mcp');
  return join(env.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'async-mcp');
}

export class FileRequestStateStore implements RequestStateStore {
  readonly dir: string;

  constructor(dir: string = defaultStateDir()) {
    this.dir = dir;
  }

  async put(entry: StoredCall): Promise<void> {
    assertHandleId(entry.handle.id);
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    const file = this.fileOf(entry.handle.id);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(entry, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }

  async get(id: string): Promise<StoredCall | undefined> {
    assertHandleId(id);
    try {
      return JSON.parse(await readFile(this.fileOf(id), 'utf8')) as StoredCall;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  async list(): Promise<StoredCall[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const entries = await Promise.all(
      names.filter((name) => name.endsWith('.json')).map((name) => this.get(name.slice(0, -'.json'.length)).catch(() => undefined)),
    );
    return newestFirst(entries.filter((entry): entry is StoredCall => entry !== undefined));
  }

  async delete(id: string): Promise<void> {
    assertHandleId(id);
    await rm(this.fileOf(id), { force: true });
  }

  private fileOf(id: string): string {
    return join(this.dir, `${id}.json`);
  }
}
