/**
 * Client capabilities across the requests of an initialize-era client. A stateless server
 * forgets `initialize`, where these clients declare elicitation, sampling and roots, so an
 * execution could never ask them anything. The `Mcp-Session-Id` answered to such an
 * `initialize` therefore *is* those capabilities, signed with the server secret and bound to
 * the principal: any instance reads them back from the header, and nothing is stored.
 *
 * Streamable HTTP (2025-03-26 to 2025-11-25): "The session ID SHOULD be globally unique and
 * cryptographically secure", "MUST only contain visible ASCII characters", and "The server
 * MAY terminate the session at any time, after which it MUST respond to requests containing
 * that session ID with HTTP 404 Not Found", so an id that does not verify gets 404 and the
 * client initializes again.
 *
 * Every `initialize` gets a session, so that what a client did *not* declare is known too:
 * 2025-11-25 `ClientCapabilities.tasks` is "Present if the client supports task-augmented
 * requests", and a client of that revision without it is a host with no task support, which
 * is served the handle tools. Ids minted before tasks were recorded (`s1`) read as declaring
 * tasks, so their clients keep the listing they had.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { inputCapabilitiesOf } from './mcp-input-protocol.ts';
import { mcpAppsCapabilityOf } from '../apps/operation-card.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson, isObject } from '../../shared/json-values.ts';
import { verifyWithKeys, type ServerKey } from '../../shared/server-key.ts';

/** The header, lower case as `Headers` gives it. */
export const SESSION_HEADER = 'mcp-session-id';
const VERSION = 's2';
/** Ids minted before tasks were recorded: they declared only input capabilities. */
const INPUT_ONLY_VERSION = 's1';
/** Capabilities larger than this (JSON) keep only their names, so the header stays small. */
const MAX_CAPABILITIES_JSON = 1024;
/** No id we mint is longer; a longer header names no session. */
const MAX_SESSION_ID_LENGTH = 2048;

/** The session id for an `initialize` that declared `capabilities`: what later requests need of them (input, tasks and MCP Apps). */
export async function mintSessionId(capabilities: unknown, ownerId: string, secretKey: () => Promise<Uint8Array>): Promise<string> {
  const all = isObject(capabilities) ? capabilities : {};
  // MCP Apps too: a host of these revisions declares it at initialize only, and tools/list needs it.
  const declared = { ...inputCapabilitiesOf(all), ...(isObject(all.tasks) ? { tasks: all.tasks } : {}), ...mcpAppsCapabilityOf(all) };
  // A random part keeps ids of equal capabilities apart ("globally unique").
  const payload = encodeBase64UrlJson({ c: bounded(declared), n: randomBytes(9).toString('base64url') });
  return `${VERSION}.${payload}.${await sign(payload, ownerId, secretKey)}`;
}

/** The capabilities a session id carries, or `undefined` when it is not one we signed for this principal. */
export async function readSessionId(id: string, ownerId: string, secretKey: ServerKey): Promise<Record<string, unknown> | undefined> {
  if (id.length > MAX_SESSION_ID_LENGTH) return undefined;
  const [version, payload, mac, ...rest] = id.split('.');
  if ((version !== VERSION && version !== INPUT_ONLY_VERSION) || !payload || !mac || rest.length > 0) return undefined;
  const given = Buffer.from(mac);
  // Signed with the current key or, across a rotation, the previous one.
  const signedBy = (key: Uint8Array) => {
    const expected = Buffer.from(macOf(key, payload, ownerId));
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw WRONG_KEY;
  };
  try {
    await verifyWithKeys(secretKey, signedBy, (error) => error === WRONG_KEY);
  } catch (error) {
    if (error === WRONG_KEY) return undefined;
    throw error;
  }
  const decoded = decodeBase64UrlJson(payload);
  if (!decoded || !isObject(decoded.c)) return undefined;
  return version === INPUT_ONLY_VERSION ? { tasks: {}, ...decoded.c } : decoded.c;
}

/** A request's session, checked: the request to serve (without the header) and the capabilities it carries, or the refusal. */
export type SessionCheck = { ok: true; request: Request; capabilities?: Record<string, unknown> } | { ok: false; response: Response };

/**
 * Checks the session id a request carries. The header is taken off before the SDK sees it
 * (its stateless transport knows no sessions). An `initialize` starts a new session, so
 * whatever id it carries is ignored.
 */
export async function checkSession(request: Request, body: unknown, ownerId: string, secretKey: () => Promise<Uint8Array>): Promise<SessionCheck> {
  const id = request.headers.get(SESSION_HEADER);
  if (id === null) return { ok: true, request };
  const headers = new Headers(request.headers);
  headers.delete(SESSION_HEADER);
  // Built from its parts: the request may be a runtime adapter's stand-in rather than a platform Request.
  const init = { method: request.method, headers, signal: request.signal };
  // A body already read (the SDK gets it parsed) is not carried over.
  const stripped =
    request.body && !request.bodyUsed
      ? new Request(request.url, { ...init, body: request.body, duplex: 'half' } as RequestInit)
      : new Request(request.url, init);
  if (initializeCapabilities(body) !== undefined) return { ok: true, request: stripped };
  const capabilities = await readSessionId(id, ownerId, secretKey);
  if (!capabilities) return { ok: false, response: sessionNotFound() };
  return { ok: true, request: stripped, capabilities };
}

/** The capabilities an `initialize` request body declares; `undefined` for any other body. */
export function initializeCapabilities(body: unknown): Record<string, unknown> | undefined {
  if (!isObject(body) || body.method !== 'initialize' || !('id' in body)) return undefined;
  const params = isObject(body.params) ? body.params : {};
  return isObject(params.capabilities) ? params.capabilities : {};
}

/** `response` with the session id for what `capabilities` declared, when it succeeded. */
export async function withSessionId(
  response: Response,
  capabilities: Record<string, unknown>,
  ownerId: string,
  secretKey: () => Promise<Uint8Array>,
): Promise<Response> {
  if (response.status !== 200) return response;
  const id = await mintSessionId(capabilities, ownerId, secretKey);
  const headers = new Headers(response.headers);
  headers.set(SESSION_HEADER, id);
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
}

/** "The server MAY terminate the session at any time, after which it MUST respond to requests containing that session ID with HTTP 404 Not Found." */
function sessionNotFound(): Response {
  return Response.json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } }, { status: 404 });
}

async function sign(payload: string, ownerId: string, secretKey: () => Promise<Uint8Array>): Promise<string> {
  return macOf(await secretKey(), payload, ownerId);
}

function macOf(key: Uint8Array, payload: string, ownerId: string): string {
  return createHmac('sha256', key).update(`async-mcp session\n${ownerId}\n${payload}`).digest('base64url');
}

/** Thrown by a key that did not sign the id, so the next one is tried. */
const WRONG_KEY = Symbol('wrong key');

/** The capabilities as declared, or, when that is too large, only their names and those of their first-level fields. */
function bounded(declared: Record<string, unknown>): Record<string, unknown> {
  if (JSON.stringify(declared).length <= MAX_CAPABILITIES_JSON) return declared;
  const names: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(declared)) {
    names[name] = Object.fromEntries(
      Object.keys(isObject(value) ? value : {})
        .slice(0, 8)
        .filter((key) => key.length <= 32)
        .map((key) => [key, {}]),
    );
  }
  return names;
}
