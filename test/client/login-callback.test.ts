/**
 * The pieces of `async-mcp login` around the SDK's flow: the probe that reads the server's
 * 401, and the loopback redirect listener (RFC 8252 §7.3) that takes the browser's answer.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { login } from '../../client/login/login-flow.ts';
import { listenForCallback } from '../../client/login/loopback-callback.ts';
import { FileLoginStore } from '../../client/stores/login-store.ts';

describe('the loopback redirect listener', () => {
  it('listens on 127.0.0.1 at /callback and resolves with the code of a callback that carries our state', async () => {
    const callback = await listenForCallback();
    try {
      expect(callback.redirectUri).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/callback$/);
      const answer = callback.wait('state-1', 10_000);
      // What a browser asks for besides the callback does not count.
      expect((await fetch(new URL('/favicon.ico', callback.redirectUri))).status).toBe(404);
      const page = await fetch(`${callback.redirectUri}?code=c-1&state=state-1&iss=${encodeURIComponent('http://127.0.0.1:1')}`);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('You can close this window');
      await expect(answer).resolves.toEqual({ code: 'c-1', iss: 'http://127.0.0.1:1' });
    } finally {
      await callback.close();
    }
  });

  it('rejects a callback with another state (RFC 6749 §10.12), and an error answer with its description', async () => {
    const callback = await listenForCallback();
    try {
      // Caught at once: the rejection comes while the browser's request is still being answered.
      const forged = callback.wait('state-1', 10_000).catch((error: Error) => error);
      await fetch(`${callback.redirectUri}?code=c-1&state=someone-else`);
      expect(((await forged) as Error).message).toContain('another state');
      const refused = callback.wait('state-2', 10_000).catch((error: Error) => error);
      const page = await fetch(`${callback.redirectUri}?error=access_denied&error_description=The+user+refused&state=state-2`);
      expect(page.status).toBe(400);
      expect(((await refused) as Error).message).toBe('The authorization server refused the sign-in: The user refused');
    } finally {
      await callback.close();
    }
  });

  it('gives up after the timeout, and falls back to a free port when the preferred one is taken', async () => {
    const first = await listenForCallback();
    const port = Number(new URL(first.redirectUri).port);
    const second = await listenForCallback(port);
    try {
      expect(second.redirectUri).not.toBe(first.redirectUri);
      await expect(second.wait('s', 50)).rejects.toThrow(`No sign-in came back to ${second.redirectUri}`);
    } finally {
      await first.close();
      await second.close();
    }
  });
});

describe('login against servers that do not ask for one', () => {
  let server: Server;
  let url: string;
  let stateDir: string;
  beforeAll(async () => {
    server = createServer((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"jsonrpc":"2.0","id":"async-mcp-login","result":{}}'),
    );
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
    stateDir = await mkdtemp(join(tmpdir(), 'async-mcp-login-flow-'));
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
    await rm(stateDir, { recursive: true, force: true });
  });

  it('a server that answers without a 401 has nothing to log in to, and nothing is kept', async () => {
    const store = new FileLoginStore(stateDir);
    const shown: URL[] = [];
    expect(await login(url, { store, onAuthorizationUrl: (u) => void shown.push(u) })).toEqual({ loggedIn: false, url, httpStatus: 200 });
    expect(shown).toEqual([]);
    expect(store.has(url)).toBe(false);
  });

  it('a server that cannot be reached is named in the error', async () => {
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', done));
    const gone = `http://127.0.0.1:${(closed.address() as AddressInfo).port}/mcp`;
    await new Promise((done) => closed.close(done));
    await expect(login(gone, { store: new FileLoginStore(stateDir), onAuthorizationUrl: () => undefined })).rejects.toThrow(`Could not reach ${gone}`);
  });
});
