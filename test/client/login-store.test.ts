/** The login store: one file per server, keyed by its resource URL, readable only by the user. */
import { mkdtemp, readdir, rm, stat, writeFile, chmod, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { FileLoginStore, loginKey } from '../../client/stores/login-store.ts';

let stateDir: string;
beforeEach(async () => {
  stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-logins-'));
});
afterEach(async () => {
  await rm(stateDir, { recursive: true, force: true });
});

const login = (url: string, token = 'access-1') => ({
  resource: loginKey(url),
  serverUrl: url,
  tokens: { access_token: token, token_type: 'Bearer' },
  tokensSavedAt: 1,
});

describe('FileLoginStore', () => {
  it('keeps each login in a file of mode 0600 inside a directory of mode 0700, beside the handles', async () => {
    const store = new FileLoginStore(stateDir);
    await store.put(login('http://127.0.0.1:3000/mcp'));
    expect(store.dir).toBe(join(stateDir, 'logins'));
    expect((await stat(store.dir)).mode & 0o777).toBe(0o700);
    const [file] = await readdir(store.dir);
    expect((await stat(join(store.dir, file!))).mode & 0o777).toBe(0o600);
    // Nothing of the login file is a handle file the request store would list.
    expect((await readdir(stateDir)).filter((name) => name.endsWith('.json'))).toEqual([]);
  });

  it('tightens a logins directory that already existed with looser permissions', async () => {
    await mkdir(join(stateDir, 'logins'), { mode: 0o755 });
    await chmod(join(stateDir, 'logins'), 0o755);
    await new FileLoginStore(stateDir).put(login('http://127.0.0.1:3000/mcp'));
    expect((await stat(join(stateDir, 'logins'))).mode & 0o777).toBe(0o700);
  });

  it('keys logins by the resource URL: the same server with a fragment is the same login, another path is not', async () => {
    const store = new FileLoginStore(stateDir);
    await store.put(login('http://127.0.0.1:3000/mcp', 'one'));
    await store.put(login('http://127.0.0.1:3000/other', 'two'));
    expect((await store.get('http://127.0.0.1:3000/mcp#x'))?.tokens?.access_token).toBe('one');
    expect((await store.get('http://127.0.0.1:3000/other'))?.tokens?.access_token).toBe('two');
    expect(await store.get('http://127.0.0.1:3001/mcp')).toBeUndefined();
    expect(store.has('http://127.0.0.1:3000/mcp')).toBe(true);
  });

  it('never hands out a file whose recorded resource is another server’s', async () => {
    const store = new FileLoginStore(stateDir);
    await mkdir(store.dir, { recursive: true });
    await writeFile(store.fileOf('http://127.0.0.1:3000/mcp'), JSON.stringify(login('https://elsewhere.example/mcp')), { mode: 0o600 });
    expect(await store.get('http://127.0.0.1:3000/mcp')).toBeUndefined();
  });

  it('delete says whether there was a login, and deleting none is not an error', async () => {
    const store = new FileLoginStore(stateDir);
    await store.put(login('http://127.0.0.1:3000/mcp'));
    expect(await store.delete('http://127.0.0.1:3000/mcp')).toBe(true);
    expect(await store.get('http://127.0.0.1:3000/mcp')).toBeUndefined();
    expect(await store.delete('http://127.0.0.1:3000/mcp')).toBe(false);
  });
});
