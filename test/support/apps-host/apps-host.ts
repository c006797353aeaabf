/**
 * A test MCP Apps host: an SDK v2 client (2026-07-28, declaring `io.modelcontextprotocol/ui`
 * and elicitation forms per request) connected to an MCP server, and a page in headless
 * Chromium that renders each tool's view with the SDK's `AppBridge`, through a sandbox proxy
 * on a second loopback origin that enforces the view's CSP as an HTTP header.
 *
 * Like a real host, it forwards the view's `tools/call` only for tools whose visibility
 * includes "app" ("Host MUST reject tools/call requests from apps for tools that don't include
 * "app" in visibility"), passes `resources/read` on, and hands the view the tool's input and
 * result. Everything the pages load is recorded, so a test can hold that a view loads nothing.
 */
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { McpUiHostContext, McpUiResourceCsp } from '@modelcontextprotocol/ext-apps/app-bridge';
import { build } from 'esbuild';
import { chromium, type BrowserContext, type FrameLocator, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
// The flags Chromium needs on a CI network with no GPU, no sandbox and no Google services.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];
const HERE = import.meta.dirname;
const UI = { 'io.modelcontextprotocol/ui': { mimeTypes: ['text/html;profile=mcp-app'] } };
const MIME = 'text/html;profile=mcp-app';

/** A host's look: a few of the standard MCP Apps variables, as a host passes them. */
export const HOST_THEMES: Record<'light' | 'dark', McpUiHostContext> = {
  light: {
    theme: 'light',
    styles: {
      variables: {
        '--color-background-primary': 'light-dark(#ffffff, #1f1f23)',
        '--color-text-primary': 'light-dark(#18181b, #f4f4f5)',
        '--color-border-primary': 'light-dark(#dcdce0, #3a3a40)',
        '--font-sans': 'system-ui, sans-serif',
      } as never,
    },
  },
  dark: {
    theme: 'dark',
    styles: {
      variables: {
        '--color-background-primary': 'light-dark(#ffffff, #1f1f23)',
        '--color-text-primary': 'light-dark(#18181b, #f4f4f5)',
        '--color-border-primary': 'light-dark(#dcdce0, #3a3a40)',
        '--font-sans': 'system-ui, sans-serif',
      } as never,
    },
  },
};

type Tool = { name: string; title?: string; _meta?: Record<string, unknown>; [key: string]: unknown };
type ToolResult = Record<string, unknown>;
/** What the host does with a form question its own client is asked (the test decides). */
export type ElicitationHandler = (params: Record<string, unknown>) => Promise<Record<string, unknown>>;

export interface CardRun {
  /** The inner frame: the view itself. */
  card: FrameLocator;
  /** The host's own tools/call, as its client got it (a handle, or the tool's result). */
  result: Promise<ToolResult>;
  /** The JSON-RPC id of that tools/call. */
  requestId: string | number;
}

export interface AppsHost {
  page: Page;
  client: Client;
  tools: Map<string, Tool>;
  /** Every URL the page and its frames requested. */
  requests: string[];
  /** Console messages about the Content Security Policy (violations). */
  cspReports: string[];
  /** The view's tools/call requests the host forwarded, by tool name. */
  forwarded: string[];
  /** Files the view asked the host to download (`ui/download-file`). */
  downloads: unknown[];
  /** Set by a test: how the host's own client answers a form question. */
  onElicitation: ElicitationHandler;
  /** Calls `name` as the model would, and renders its card beside the call. */
  callWithCard(name: string, args: Record<string, unknown>, theme?: 'light' | 'dark'): Promise<CardRun>;
  close(): Promise<void>;
}

export async function startAppsHost(mcpUrl: URL, headers: Record<string, string> = {}): Promise<AppsHost> {
  const cleanups: Array<() => Promise<unknown>> = [];
  const close = async () => {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const script = await bundleHostPage();
    const pages = await listen((req, res) => servePage(req, res, script));
    cleanups.push(() => closeServer(pages));
    const sandbox = await listen(serveSandbox);
    cleanups.push(() => closeServer(sandbox));

    const requestIds = new Map<string, (id: string | number) => void>();
    const transport = new StreamableHTTPClientTransport(mcpUrl, { requestInit: { headers } });
    // The JSON-RPC id of each tools/call, as the host passes it to the view (`toolInfo.id`).
    const send = transport.send.bind(transport);
    transport.send = async (message, options) => {
      const sent = message as { method?: string; id?: string | number; params?: { name?: string } };
      if (sent.method === 'tools/call' && sent.id !== undefined && sent.params?.name) requestIds.get(sent.params.name)?.(sent.id);
      return send(message, options);
    };
    const client = new Client(
      { name: 'async-mcp-test-host', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' }, capabilities: { extensions: UI, elicitation: { form: {} } } as never },
    );
    const host: AppsHost = {
      page: undefined as unknown as Page,
      client,
      tools: new Map(),
      requests: [],
      cspReports: [],
      forwarded: [],
      downloads: [],
      onElicitation: () => new Promise(() => undefined),
      callWithCard: async (name, args, theme = 'light') => {
        const tool = host.tools.get(name);
        const uri = (tool?._meta?.ui as { resourceUri?: string } | undefined)?.resourceUri;
        if (!tool || !uri) throw new Error(`${name} has no view`);
        const read = await client.readResource({ uri });
        const [content] = read.contents as Array<{ mimeType?: string; text?: string; _meta?: { ui?: { csp?: McpUiResourceCsp } } }>;
        if (content?.mimeType !== MIME || typeof content.text !== 'string') throw new Error(`${uri} is not an MCP App`);
        const sentId = new Promise<string | number>((resolve) => requestIds.set(name, resolve));
        const result = client.callTool({ name, arguments: args }) as Promise<ToolResult>;
        const requestId = await sentId;
        const hostContext: McpUiHostContext = {
          ...HOST_THEMES[theme],
          toolInfo: { id: requestId, tool: tool as never },
          displayMode: 'inline',
          availableDisplayModes: ['inline'],
          containerDimensions: { width: 608, maxHeight: 900 },
          locale: 'en-US',
          platform: 'web',
        };
        await host.page.evaluate(
          ({ theme: shade, name: called, args: input }) => {
            document.body.classList.toggle('dark', shade === 'dark');
            // One call per conversation: the previous card is torn down first (showCard does).
            for (const old of Array.from(document.querySelectorAll('#conversation > p'))) old.remove();
            const turn = document.createElement('p');
            turn.className = 'turn';
            turn.innerHTML = '<span class="who">Assistant</span> called ';
            turn.append(Object.assign(document.createElement('code'), { textContent: `${called} ${JSON.stringify(input)}` }));
            document.getElementById('conversation')?.append(turn);
          },
          { theme, name, args },
        );
        // Serialized for the page: its JSON is all the page needs (and keeps the checker's types shallow).
        const show: string = JSON.stringify({
          html: content.text,
          ...(content._meta?.ui?.csp ? { csp: content._meta.ui.csp } : {}),
          hostContext,
          toolInput: args,
          sandboxUrl: `${sandbox.origin}/sandbox.html`,
        });
        await host.page.evaluate((json) => (window as unknown as { showCard(s: unknown): Promise<void> }).showCard(JSON.parse(json)), show);
        // "Host MUST send this notification when tool execution completes".
        result.then(
          (done) =>
            host.page.evaluate((r) => (window as unknown as { sendToolResult(x: unknown): void }).sendToolResult(r), done as never).catch(() => undefined),
          (error: unknown) =>
            host.page
              .evaluate((reason) => (window as unknown as { sendToolCancelled(x: string): void }).sendToolCancelled(reason), String(error))
              .catch(() => undefined),
        );
        return { card: host.page.frameLocator('iframe#card').frameLocator('iframe'), result, requestId };
      },
      close,
    };
    client.setRequestHandler('elicitation/create', async (request) => (await host.onElicitation(request.params as Record<string, unknown>)) as never);
    await client.connect(transport);
    cleanups.push(() => client.close());
    host.tools = new Map(((await client.listTools()).tools as Tool[]).map((tool) => [tool.name, tool]));

    const profile = await mkdtemp(join(tmpdir(), 'async-mcp-apps-host-'));
    cleanups.push(() => rm(profile, { recursive: true, force: true }));
    const context: BrowserContext = await chromium.launchPersistentContext(profile, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 672, height: 900 },
      deviceScaleFactor: 1,
    });
    cleanups.push(() => context.close());
    const page = context.pages()[0] ?? (await context.newPage());
    host.page = page;
    page.on('request', (request) => host.requests.push(request.url()));
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) host.cspReports.push(message.text());
    });
    await page.exposeFunction('hostCallTool', async (params: { name: string; arguments?: Record<string, unknown> }) => {
      const visibility = (host.tools.get(params.name)?._meta?.ui as { visibility?: string[] } | undefined)?.visibility ?? ['model', 'app'];
      if (!host.tools.has(params.name) || !visibility.includes('app')) throw new Error(`The view may not call ${params.name}`);
      host.forwarded.push(params.name);
      return client.callTool({ name: params.name, arguments: params.arguments ?? {} });
    });
    await page.exposeFunction('hostReadResource', (params: { uri: string }) => client.readResource({ uri: params.uri }));
    await page.exposeFunction('hostDownloadFile', (params: unknown) => {
      host.downloads.push(params);
      return {};
    });
    await page.goto(`${pages.origin}/host.html`);
    await page.waitForFunction(() => typeof (window as unknown as { showCard?: unknown }).showCard === 'function');
    return host;
  } catch (error) {
    await close();
    throw error;
  }
}

/** The host page's script: the SDK's AppBridge and the page glue, bundled for the browser. */
async function bundleHostPage(): Promise<string> {
  const result = await build({ entryPoints: [join(HERE, 'host-page.ts')], bundle: true, format: 'esm', platform: 'browser', write: false, logLevel: 'silent' });
  const [output] = result.outputFiles;
  if (!output) throw new Error('esbuild wrote no host page');
  return output.text;
}

function servePage(req: IncomingMessage, res: ServerResponse, script: string): void {
  if (req.url === '/host.html') return void res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(readFileSync(join(HERE, 'host.html')));
  if (req.url === '/host.js') return void res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(script);
  res.writeHead(404).end();
}

/** The sandbox proxy, with the CSP the spec builds from the resource's declared domains. */
function serveSandbox(req: IncomingMessage, res: ServerResponse): void {
  const url = new URL(req.url ?? '/', 'http://127.0.0.1');
  if (url.pathname !== '/sandbox.html') return void res.writeHead(404).end();
  let csp: McpUiResourceCsp = {};
  try {
    csp = JSON.parse(url.searchParams.get('csp') ?? '{}') as McpUiResourceCsp;
  } catch {
    // No readable CSP: the restrictive default.
  }
  res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': cspHeader(csp) }).end(readFileSync(join(HERE, 'sandbox.html')));
}

/** "CSP Construction from Metadata", as the spec writes it. */
export function cspHeader(csp: McpUiResourceCsp): string {
  const list = (domains: string[] | undefined) => (domains ?? []).join(' ');
  return [
    "default-src 'none'",
    `script-src 'self' 'unsafe-inline' ${list(csp.resourceDomains)}`,
    `style-src 'self' 'unsafe-inline' ${list(csp.resourceDomains)}`,
    `connect-src 'self' ${list(csp.connectDomains)}`,
    `img-src 'self' data: ${list(csp.resourceDomains)}`,
    `font-src 'self' ${list(csp.resourceDomains)}`,
    `media-src 'self' data: ${list(csp.resourceDomains)}`,
    `frame-src ${csp.frameDomains?.length ? list(csp.frameDomains) : "'none'"}`,
    "object-src 'none'",
    `base-uri ${csp.baseUriDomains?.length ? list(csp.baseUriDomains) : "'self'"}`,
  ]
    .map((directive) => directive.trim())
    .join('; ');
}

async function listen(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<Server & { origin: string }> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(server, { origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
}

function closeServer(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}
