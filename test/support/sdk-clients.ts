/** The two official SDK clients, one per protocol era, connected to a server the same way. */
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';

/** What the tests use of either client. */
export interface AnyClient {
  listTools(): Promise<{ tools: Tool[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<CallToolResult>;
  close(): Promise<void>;
}

/** The text of a result's first content block, or `''` when that block is not text. */
export function firstText(result: CallToolResult): string {
  const [first] = result.content;
  return first?.type === 'text' ? first.text : '';
}

/**
 * `[label, connect]` pairs for `describe.each`: the v2 Client (2026-07-28) and the v1 Client
 * (2025-11-25). `url` is read when a client connects, so it may be set in `beforeAll`.
 */
export function sdkClients(url: () => URL, name: string): Array<[string, () => Promise<AnyClient>]> {
  return [
    [
      'the v2 Client (2026-07-28)',
      async () => {
        const client = new ModernClient({ name: `${name}-modern`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
        await client.connect(new ModernTransport(url()));
        return client as unknown as AnyClient;
      },
    ],
    [
      'the v1 Client (2025-11-25)',
      async () => {
        const client = new LegacyClient({ name: `${name}-legacy`, version: '1.0.0' });
        await client.connect(new LegacyTransport(url()));
        return client as unknown as AnyClient;
      },
    ],
  ];
}
