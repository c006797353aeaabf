/**
 * The redirect endpoint of a native app's sign-in (RFC 8252 §7.3): an HTTP listener on
 * 127.0.0.1 that takes one request to `/callback`, checks its `state`, tells the browser it
 * may close, and hands the code back.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { cliCommand } from '../cli-command.ts';

export interface AuthorizationCallback {
  code: string;
  /** RFC 9207's `iss`, when the authorization server sends it. */
  iss?: string;
}

export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback`. */
  readonly redirectUri: string;
  /** Resolves with the code of the first callback; rejects on an error answer, a wrong state, or the timeout. */
  wait(expectedState: string, timeoutMs: number): Promise<AuthorizationCallback>;
  close(): Promise<void>;
}

const DONE_PAGE = '<!doctype html><meta charset="utf-8"><title>async-mcp</title><p>Signed in. You can close this window and go back to the terminal.</p>';
const FAILED_PAGE = (why: string) =>
  `<!doctype html><meta charset="utf-8"><title>async-mcp</title><p>The sign-in did not complete: ${escapeHtml(why)}</p><p>Run ${escapeHtml(cliCommand())} login again.</p>`;

/** Listens on `port` (0: any free port; a busy preferred port falls back to a free one). */
export async function listenForCallback(port = 0): Promise<LoopbackCallback> {
  let deliver: ((url: URL) => void) | undefined;
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    // Browsers also ask for /favicon.ico and the like: only the callback counts.
    if (req.method !== 'GET' || url.pathname !== '/callback' || !deliver) return void res.writeHead(404).end();
    const error = url.searchParams.get('error');
    res.writeHead(error ? 400 : 200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
    res.end(error ? FAILED_PAGE(url.searchParams.get('error_description') || error) : DONE_PAGE);
    deliver(url);
  });
  await listen(server, port).catch((error: NodeJS.ErrnoException) => {
    if (port === 0 || error.code !== 'EADDRINUSE') throw error;
    return listen(server, 0);
  });
  const redirectUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`;
  return {
    redirectUri,
    wait: (expectedState, timeoutMs) =>
      new Promise<AuthorizationCallback>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`No sign-in came back to ${redirectUri} within ${Math.round(timeoutMs / 1000)}s`)), timeoutMs);
        deliver = (url) => {
          deliver = undefined;
          clearTimeout(timer);
          const params = url.searchParams;
          // RFC 6749 §10.12: a callback that does not carry our state is not the answer to our request.
          if (params.get('state') !== expectedState) return reject(new Error('The sign-in came back with another state: start it again'));
          const error = params.get('error');
          if (error) return reject(new Error(`The authorization server refused the sign-in: ${params.get('error_description') || error}`));
          const code = params.get('code');
          if (!code) return reject(new Error('The sign-in came back without a code'));
          const iss = params.get('iss');
          resolve({ code, ...(iss === null ? {} : { iss }) });
        };
      }),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (error: Error) => reject(error);
    server.once('error', onError);
    server.listen(port, '127.0.0.1', () => {
      server.removeListener('error', onError);
      resolve();
    });
  });
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
