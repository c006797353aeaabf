/**
 * Per-HTTP-request state that MCP handlers cannot reach through the SDK:
 * - work that must finish before the response is sent. The SDK acknowledges a
 *   notification (202) without waiting for its handler, but a Lambda is frozen once it
 *   has answered, so a cancel started by `notifications/cancelled` would never run;
 * - an HTTP status (and headers, such as `Retry-After`) the spec asks for where the SDK answers 200.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestScope {
  pending: Promise<unknown>[];
  status?: number;
  headers: Record<string, string>;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `serve`, waits for the work registered while it ran, and applies a status override. */
export async function withRequestScope(serve: () => Promise<Response>): Promise<Response> {
  const state: RequestScope = { pending: [], headers: {} };
  const response = await scope.run(state, serve);
  while (state.pending.length) await Promise.allSettled(state.pending.splice(0));
  const extraHeaders = Object.entries(state.headers);
  if ((state.status === undefined || response.status !== 200) && extraHeaders.length === 0) return response;
  const headers = new Headers(response.headers);
  for (const [name, value] of extraHeaders) headers.set(name, value);
  const status = state.status !== undefined && response.status === 200 ? state.status : response.status;
  return new Response(response.body, { status, statusText: '', headers });
}

/** Registers `work` with the current request, or lets it run free outside one. */
export function finishBeforeResponse(work: Promise<unknown>): void {
  scope.getStore()?.pending.push(work);
}

/** Adds a header to the current response (e.g. `Retry-After` with a 429). */
export function setHttpHeader(name: string, value: string): void {
  const state = scope.getStore();
  if (state) state.headers[name] = value;
}

/** Asks for another HTTP status than the SDK's 200 for the current response. */
export function setHttpStatus(status: number): void {
  const state = scope.getStore();
  if (state) state.status = status;
}
