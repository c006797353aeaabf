/**
 * Where `async-mcp login` keeps what a sign-in produced: per MCP server, keyed by its resource
 * URL, the client registration (RFC 7591), the tokens and the discovery results. One JSON file
 * per server under `<state dir>/logins/` (the directory 0700, each file 0600, written
 * atomically), beside the handles of the FileRequestStateStore; a renewal holds `<file>.lock`.
 */
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { OAuthDiscoveryState, StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import { resourceUrlFromServerUrl } from '@modelcontextprotocol/client';
import { defaultStateDir } from './file-request-state-store.ts';
import { withFileLock, type FileLockOptions } from './file-lock.ts';

/** One server's login. Holds secrets: it never leaves the file it is kept in. */
export interface StoredLogin {
  /** The key: the server's resource URL (its URL without a fragment, as MCP clients name it). */
  resource: string;
  /** The URL the user logged in to. */
  serverUrl: string;
  client?: StoredOAuthClientInformation;
  tokens?: StoredOAuthTokens;
  /** When the tokens were saved (epoch ms): `expires_in` counts from here. */
  tokensSavedAt?: number;
  discovery?: OAuthDiscoveryState;
}

/** The resource URL a server URL is kept under. */
export function loginKey(serverUrl: string | URL): string {
  return resourceUrlFromServerUrl(serverUrl).href;
}

export class FileLoginStore {
  readonly dir: string;

  /** `stateDir`: the same directory the handles are kept in. */
  constructor(stateDir: string = defaultStateDir()) {
    this.dir = join(stateDir, 'logins');
  }

  /** The file a server's login is kept in (named by a hash: URLs are not file names). */
  fileOf(serverUrl: string | URL): string {
    return join(this.dir, `${createHash('sha256').update(loginKey(serverUrl)).digest('hex').slice(0, 32)}.json`);
  }

  /** Whether a login is kept for the server, without reading it. */
  has(serverUrl: string | URL): boolean {
    return existsSync(this.fileOf(serverUrl));
  }

  async get(serverUrl: string | URL): Promise<StoredLogin | undefined> {
    let text: string;
    try {
      text = await readFile(this.fileOf(serverUrl), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
    const login = JSON.parse(text) as StoredLogin;
    // A hash collision, or a file copied from elsewhere: never hand one server's tokens to another.
    return login.resource === loginKey(serverUrl) ? login : undefined;
  }

  async put(login: StoredLogin): Promise<void> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    // mkdir's mode applies only when it creates the directory.
    await chmod(this.dir, 0o700);
    const file = this.fileOf(login.resource);
    const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`;
    await writeFile(temporary, `${JSON.stringify(login, null, 2)}\n`, { mode: 0o600 });
    await rename(temporary, file);
  }

  /** Reads, changes and writes back one server's login (a fresh record when none is kept). */
  async update(serverUrl: string | URL, change: (login: StoredLogin) => StoredLogin): Promise<StoredLogin> {
    const current = (await this.get(serverUrl)) ?? { resource: loginKey(serverUrl), serverUrl: String(serverUrl) };
    const next = change(current);
    await this.put(next);
    return next;
  }

  /**
   * Runs `work` holding the server's login lock, so that one process at a time renews a
   * login: authorization servers that rotate refresh tokens revoke the grant when a rotated
   * one comes back, as it would from a second process that read the same file.
   */
  async whileLocked<T>(serverUrl: string | URL, work: () => Promise<T>, options?: FileLockOptions): Promise<T> {
    await mkdir(this.dir, { recursive: true, mode: 0o700 });
    return withFileLock(`${this.fileOf(serverUrl)}.lock`, work, options);
  }

  /** Removes the login; resolves whether there was one. */
  async delete(serverUrl: string | URL): Promise<boolean> {
    const had = this.has(serverUrl);
    await rm(this.fileOf(serverUrl), { force: true });
    return had;
  }
}
