/**
 * `mcp-remote`, the stdio bridge desktop hosts run for OAuth-protected servers, as a test
 * drives it: spawned asynchronously by the official SDK's stdio client transport (as Claude
 * Desktop or Cursor spawn it), with its own credential store and a browser hook that opens
 * nothing, so the authorization URL it prints on stderr can be handed to a test's browser.
 */
import { readdir, readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const ROOT = resolve(import.meta.dirname, '../..');
/** The installed bridge's executable. */
export const MCP_REMOTE = resolve(ROOT, 'node_modules/.bin/mcp-remote');

/** The path mcp-remote serves its OAuth redirect on (RFC 8252 §7.3 loopback redirect). */
export const MCP_REMOTE_CALLBACK_PATH = '/oauth/callback';

// Variables that make xdg-open hand a URL to a desktop session instead of to $BROWSER.
const DESKTOP_VARIABLES = [
  'DISPLAY',
  'WAYLAND_DISPLAY',
  'DBUS_SESSION_BUS_ADDRESS',
  'XDG_CURRENT_DESKTOP',
  'DESKTOP_SESSION',
  'KDE_FULL_SESSION',
  'GNOME_DESKTOP_SESSION_ID',
  'MATE_DESKTOP_SESSION_ID',
];

/** A loopback port that was free a moment ago, for a callback port mcp-remote must use as given. */
export function freeLoopbackPort(): Promise<number> {
  return new Promise((done, fail) => {
    const probe = createServer();
    probe.once('error', fail);
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => done(port));
    });
  });
}

/** The tokens the bridge stored for one server in `configDir`, or undefined before any sign-in. */
export async function storedTokens(configDir: string): Promise<{ access_token: string; refresh_token?: string } | undefined> {
  // mcp-remote keeps `<server-url-hash>_tokens.json` under a folder named for its store layout.
  const store = join(configDir, 'mcp-remote-v1');
  const files = (await readdir(store).catch(() => [] as string[])).filter((name) => name.endsWith('_tokens.json'));
  if (files.length > 1) throw new Error(`${store} holds tokens for ${files.length} servers`);
  return files[0] ? JSON.parse(await readFile(join(store, files[0]), 'utf8')) : undefined;
}

/** The command line the bridge runs with: `mcp-remote <serverUrl> <callbackPort> …flags`. */
export function mcpRemoteArgs(serverUrl: URL, callbackPort: number): string[] {
  // --host: register a 127.0.0.1 redirect rather than `localhost`, the address the callback listens on.
  // --allow-http: the local stack and its authorization server are plain HTTP on loopback.
  return [serverUrl.href, String(callbackPort), '--host', '127.0.0.1', '--allow-http', '--transport', 'http-only'];
}

export interface McpRemoteOptions {
  serverUrl: URL;
  callbackPort: number;
  /** Where the bridge keeps its client registrations and tokens (MCP_REMOTE_CONFIG_DIR). */
  configDir: string;
  /** The MCP client's name in `initialize` (unless `client` is given). */
  clientName: string;
  /**
   * The revision the host offers at `initialize` (unless `client` is given); the bridge passes the
   * handshake through unchanged. @default '2025-06-18' (a host from before tasks)
   */
  protocolVersion?: string;
  /** Flags after the standard ones, e.g. `['--protocol', 'auto']`. */
  extraArgs?: readonly string[];
}

/** The host's side: any MCP client that connects over a transport and closes (the SDK's v1 or v2 `Client`). */
export interface HostClient {
  // `never`: method parameters are bivariant, so either SDK's Client fits with its own Transport type.
  connect(transport: never, options?: { timeout?: number }): Promise<void>;
  close(): Promise<void>;
}

export interface McpRemoteBridge<C extends HostClient = Client> {
  /** Settles once `initialize` went through the bridge: after sign-in, or at once with stored tokens. */
  readonly connected: Promise<C>;
  /** The first authorization URL the bridge printed, or undefined if it connected (or exited) without one. */
  readonly authorizationUrl: Promise<URL | undefined>;
  /** Everything the bridge wrote to stderr so far. */
  stderr(): string;
  close(): Promise<void>;
}

/**
 * Spawns the bridge through `StdioClientTransport` and sends `initialize` at once: the bridge
 * signs in first and reads stdin afterwards, as it does under a host.
 */
export function startMcpRemote<C extends HostClient = Client>(options: McpRemoteOptions & { client?: C }): McpRemoteBridge<C> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !DESKTOP_VARIABLES.includes(name)) env[name] = value;
  // xdg-open runs $BROWSER with the URL; `true` opens nothing and reports success, so no desktop browser starts.
  Object.assign(env, { MCP_REMOTE_CONFIG_DIR: options.configDir, BROWSER: 'true', NODE_NO_WARNINGS: '1' });
  const transport = new StdioClientTransport({
    command: MCP_REMOTE,
    args: [...mcpRemoteArgs(options.serverUrl, options.callbackPort), ...(options.extraArgs ?? [])],
    env,
    stderr: 'pipe',
    cwd: ROOT,
  });

  let text = '';
  let settleUrl: (url: URL | undefined) => void = () => undefined;
  const authorizationUrl = new Promise<URL | undefined>((done) => (settleUrl = done));
  transport.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
    // The bridge prints "Please authorize this client by visiting:" and the URL on the next line.
    const found = /Please authorize this client by visiting:\s*\n\s*(\S+)/.exec(text)?.[1];
    if (found) settleUrl(new URL(found));
  });

  // The default negotiation is the plain initialize handshake: no server/discover probe, no second process.
  const client =
    options.client ??
    (new Client({ name: options.clientName, version: '1.0.0' }, { supportedProtocolVersions: [options.protocolVersion ?? '2025-06-18'] }) as unknown as C);
  const connected = client.connect(transport as never, { timeout: 60_000 }).then(() => client);
  connected.then(
    () => settleUrl(undefined),
    () => settleUrl(undefined),
  );
  transport.onclose = () => settleUrl(undefined);

  return {
    connected,
    authorizationUrl,
    stderr: () => text,
    close: async () => {
      await client.close().catch(() => undefined);
      await transport.close().catch(() => undefined);
    },
  };
}
