/**
 * The test host's page: a minimal MCP Apps host on the SDK's own host side (`AppBridge`),
 * run in Chromium. It renders a view the way the spec asks a web host to: in a sandbox
 * proxy on another origin, which loads the view's HTML under the CSP its resource declared.
 * The host's MCP client lives in the test (Node); the page reaches it through functions
 * the test exposes (`hostCallTool`, `hostReadResource`), as a desktop host's page reaches
 * its main process.
 */
import { AppBridge, PostMessageTransport, type McpUiHostContext, type McpUiResourceCsp } from '@modelcontextprotocol/ext-apps/app-bridge';

interface HostFunctions {
  hostCallTool(params: unknown): Promise<unknown>;
  hostReadResource(params: unknown): Promise<unknown>;
  hostDownloadFile(params: unknown): Promise<unknown>;
}

/** What the test asks the page to show. */
export interface ShowCard {
  html: string;
  csp?: McpUiResourceCsp;
  hostContext: McpUiHostContext;
  toolInput: Record<string, unknown>;
  /** The sandbox proxy's URL: another origin than this page's. */
  sandboxUrl: string;
}

const host = window as unknown as Window & HostFunctions & Record<string, unknown>;
const HOST_INFO = { name: 'async-mcp test host', version: '1.0.0' };
let bridge: AppBridge | undefined;

/** Loads the sandbox proxy and waits for it to say it is ready. */
function loadSandbox(frame: HTMLIFrameElement, url: string): Promise<void> {
  return new Promise((resolve) => {
    const listener = ({ source, data }: MessageEvent) => {
      if (source === frame.contentWindow && data?.method === 'ui/notifications/sandbox-proxy-ready') {
        window.removeEventListener('message', listener);
        resolve();
      }
    };
    window.addEventListener('message', listener);
    frame.src = url;
  });
}

host.showCard = async (show: ShowCard) => {
  await closeCard();
  const frame = document.createElement('iframe');
  frame.id = 'card';
  frame.title = 'Operation card';
  frame.setAttribute('sandbox', 'allow-scripts allow-same-origin allow-forms');
  document.getElementById('conversation')?.append(frame);
  const url = new URL(show.sandboxUrl);
  if (show.csp) url.searchParams.set('csp', JSON.stringify(show.csp));
  await loadSandbox(frame, url.href);
  const view = frame.contentWindow;
  if (!view) throw new Error('the sandbox frame has no window');
  const opened = new AppBridge(null, HOST_INFO, { serverTools: {}, serverResources: {}, downloadFile: {}, logging: {} }, { hostContext: show.hostContext });
  bridge = opened;
  bridge.oncalltool = async (params) => (await host.hostCallTool(params)) as never;
  bridge.onreadresource = async (params) => (await host.hostReadResource(params)) as never;
  bridge.ondownloadfile = async (params) => (await host.hostDownloadFile(params)) as never;
  bridge.onsizechange = ({ height }) => {
    if (height !== undefined) frame.style.height = `${height}px`;
  };
  const initialized = new Promise<void>((resolve) => {
    opened.oninitialized = () => resolve();
  });
  await bridge.connect(new PostMessageTransport(view, view));
  await bridge.sendSandboxResourceReady({ html: show.html, ...(show.csp ? { csp: show.csp } : {}) });
  await initialized;
  await bridge.sendToolInput({ arguments: show.toolInput });
};

host.sendToolResult = (result: never) => bridge?.sendToolResult(result);
host.sendToolCancelled = (reason: string) => bridge?.sendToolCancelled({ reason });
host.setHostContext = (context: McpUiHostContext) => bridge?.setHostContext(context);
/** "Host MUST send this notification before tearing down the UI resource", then removes its frame. */
async function closeCard(): Promise<void> {
  await bridge?.teardownResource({ reason: 'the next tool call' }).catch(() => undefined);
  await bridge?.close().catch(() => undefined);
  bridge = undefined;
  document.getElementById('card')?.remove();
}

host.closeCard = closeCard;
