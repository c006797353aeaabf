/**
 * Per-HTTP-request state that MCP handlers cannot reach through the SDK:
 * - work that must finish before the response is sent. The SDK acknowledges a
 *   notification (202) without waiting for its handler, but a Lambda is frozen once it
 *   has answered, so a cancel started by `notifications/cancelled` would never run;
 * - an HTTP status the spec asks for where the SDK answers 200.
 */
import { AsyncLocalStorage } from 'node:async_hooks';

interface RequestScope {
  pending: Promise<unknown>[];
  status?: number;
}

const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `serve`, waits for the work registered while it ran, and applies a status override. */
export async function withRequestScope(serve: () => Promise<Response>): Promise<Response> {
  const state: RequestScope = { pending: [] };
  const response = await scope.run(state, serve);
  while (state.pending.length) await Promise.allSettled(state.pending.splice(0));
  if (state.status === undefined || response.status !== 200) return response;
  return new Response(response.body, { status: state.status, statusText: '', headers: response.headers });
}

/** Registers `work` with the current request, or lets it run free outside one. */
export function finishBeforeResponse(work: Promise<unknown>): void {
  scope.getStore()?.pending.push(work);
}

/** Asks for another HTTP status than the SDK's 200 for the current response. */
export function setHttpStatus(status: number): void {
  const state = scope.getStore();
  if (state) state.status = status;
}
