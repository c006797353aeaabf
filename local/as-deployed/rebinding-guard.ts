/**
 * DNS-rebinding protection for the local Function URL: a page whose own name resolves to
 * 127.0.0.1 sends its name as Host, and its origin as Origin. `npm start` refuses both in the
 * MCP edge (allowedHostnames); an assembly's MCP function runs as in AWS, where the Function
 * URL's own name is the only Host, so the local URL in front of it refuses them instead, with
 * the same checks and the same 403.
 */
import type { IncomingMessage } from 'node:http';
import { hostHeaderValidationResponse, localhostAllowedHostnames, originValidationResponse } from '@modelcontextprotocol/server';

/** Refuses a request whose Host or Origin names anything but loopback or `host` (the address the URL binds); `undefined` lets it through. */
export function rebindingGuard(host: string): (request: IncomingMessage) => Response | undefined {
  const allowed = [...new Set([...localhostAllowedHostnames(), host.includes(':') ? `[${host}]` : host])];
  return (request) => {
    const headers = new Headers();
    for (const name of ['host', 'origin'] as const) {
      const value = request.headers[name];
      if (value !== undefined) headers.set(name, value);
    }
    // The checks read only these headers; the URL is a placeholder.
    const view = new Request('http://function-url.local/', { headers });
    return hostHeaderValidationResponse(view, allowed) ?? originValidationResponse(view, allowed);
  };
}
