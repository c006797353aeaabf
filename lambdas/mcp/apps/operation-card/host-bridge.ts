/**
 * The view's side of the MCP Apps host bridge (SEP-1865): JSON-RPC 2.0 over `postMessage`
 * with the window that embeds the card. "Note that you don't need an SDK to 'talk MCP'
 * with the host": the SDK's `App` would add its MCP client and zod (about 660 KB minified)
 * to a card of a few dozen, so the card speaks the few messages it needs itself, typed
 * with the SDK's own protocol types. Everything the card does goes through here: it makes
 * no request of its own (its CSP allows none).
 */
import type {
  McpUiAppCapabilities,
  McpUiHostContext,
  McpUiInitializeResult,
  McpUiSizeChangedNotification,
  McpUiToolCancelledNotification,
  McpUiToolInputNotification,
} from '@modelcontextprotocol/ext-apps';
import type { ToolResult } from './operation-ref.ts';

/** The MCP Apps revision the card is written to. */
const PROTOCOL_VERSION = '2026-01-26';

/** A JSON-RPC error the host answered with. */
export class HostError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
    this.name = 'HostError';
  }
}

/** What the host tells the card, each optional. */
export interface HostEvents {
  toolInput?(params: McpUiToolInputNotification['params']): void;
  toolResult?(result: ToolResult): void;
  toolCancelled?(params: McpUiToolCancelledNotification['params']): void;
  hostContextChanged?(context: McpUiHostContext): void;
  /** The host is about to remove the card: stop everything. */
  teardown?(): void;
}

type JsonRpcMessage = { jsonrpc: '2.0'; id?: string | number; method?: string; params?: unknown; result?: unknown; error?: { code: number; message: string } };

export class HostBridge {
  #nextId = 1;
  readonly #pending = new Map<string | number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();

  constructor(
    private readonly events: HostEvents,
    private readonly host: Window = window.parent,
  ) {
    window.addEventListener('message', (event: MessageEvent) => {
      // Only the embedding window (the host, or its sandbox proxy) speaks for the host.
      if (event.source !== this.host) return;
      this.#receive(event.data as JsonRpcMessage);
    });
  }

  /** `ui/initialize`, then `ui/notifications/initialized`: the host sends nothing before it. */
  async connect(appInfo: { name: string; version: string }, appCapabilities: McpUiAppCapabilities): Promise<McpUiInitializeResult> {
    const result = (await this.request('ui/initialize', { appInfo, appCapabilities, protocolVersion: PROTOCOL_VERSION })) as McpUiInitializeResult;
    this.notify('ui/notifications/initialized', {});
    return result;
  }

  /** `tools/call` on the server, through the host (with the user's own connection and principal). */
  async callServerTool(name: string, args: Record<string, unknown>): Promise<ToolResult> {
    return (await this.request('tools/call', { name, arguments: args })) as ToolResult;
  }

  /** `resources/read` on the server, through the host. */
  async readServerResource(uri: string): Promise<{ contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }> }> {
    return (await this.request('resources/read', { uri })) as { contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }> };
  }

  /** `ui/download-file` for a resource link: the host fetches and saves it. */
  async downloadFile(link: Record<string, unknown>): Promise<void> {
    await this.request('ui/download-file', { contents: [link] });
  }

  /** The card's size, so a host that lets it size itself fits the frame to it. */
  sizeChanged(params: McpUiSizeChangedNotification['params']): void {
    this.notify('ui/notifications/size-changed', params);
  }

  request(method: string, params: unknown): Promise<unknown> {
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#post({ jsonrpc: '2.0', id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    this.#post({ jsonrpc: '2.0', method, params });
  }

  #post(message: JsonRpcMessage): void {
    this.host.postMessage(message, '*');
  }

  #receive(message: JsonRpcMessage): void {
    if (typeof message !== 'object' || message === null || message.jsonrpc !== '2.0') return;
    if (message.method === undefined) {
      const waiting = message.id === undefined ? undefined : this.#pending.get(message.id);
      if (!waiting || message.id === undefined) return;
      this.#pending.delete(message.id);
      if (message.error) waiting.reject(new HostError(message.error.code, message.error.message));
      else waiting.resolve(message.result);
      return;
    }
    if (message.id !== undefined) this.#answer(message.id, message.method);
    else this.#notified(message.method, message.params);
  }

  #answer(id: string | number, method: string): void {
    if (method === 'ui/resource-teardown') this.events.teardown?.();
    if (method === 'ui/resource-teardown' || method === 'ping') this.#post({ jsonrpc: '2.0', id, result: {} });
    else this.#post({ jsonrpc: '2.0', id, error: { code: -32601, message: `Method not found: ${method}` } });
  }

  #notified(method: string, params: unknown): void {
    const given = params ?? {};
    if (method === 'ui/notifications/tool-input') this.events.toolInput?.(given as McpUiToolInputNotification['params']);
    else if (method === 'ui/notifications/tool-result') this.events.toolResult?.(given as ToolResult);
    else if (method === 'ui/notifications/tool-cancelled') this.events.toolCancelled?.(given as McpUiToolCancelledNotification['params']);
    else if (method === 'ui/notifications/host-context-changed') this.events.hostContextChanged?.(given as McpUiHostContext);
  }
}
