/**
 * The `requestState` of a multi round-trip `tools/call` (SEP-2322): which operation an
 * earlier round of the call started, handed to the client and echoed on its retry.
 *
 * "servers MUST treat requestState as an attacker-controlled input ... MUST protect its
 * integrity (e.g. HMAC or AEAD) and MUST reject state that fails verification", and
 * "SHOULD include ... the authenticated principal ... a short expiry ... an identifier for
 * the originating request": so the state is the claims in base64url JSON plus an
 * HMAC-SHA256 over them with the server's secret key, and a state is accepted only from
 * the same principal, on a retry of the same call, before it expires.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { Dialect } from '../../operations/operation.ts';
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../../shared/json-values.ts';

/**
 * How long a client has to answer and retry (seconds). Short, as the spec asks; each round
 * hands out a fresh state, so only the wait for one answer is bounded by it. A synchronous
 * call's round left unanswered this long is abandoned: its execution is stopped.
 */
export const REQUEST_STATE_TTL_SECONDS = 15 * 60;
/** The longest state looked at (characters): every state we issue is far shorter. */
export const MAX_REQUEST_STATE_LENGTH = 2048;
const VERSION = 'v1';
/** Keeps these MACs apart from any other the same key signs (session ids). */
const MAC_LABEL = 'async-mcp requestState v1\ntools/call\n';

/** What a state vouches for. */
export interface RequestStateClaims {
  /** The operation an earlier round of the call started. */
  token: string;
  /** The principal (its hash) the state was issued to. */
  ownerId: string;
  /** The call it continues: the tool, a digest of its arguments, and the wire it runs on. */
  tool: string;
  argumentsHash: string;
  dialect: Dialect;
  /** Epoch seconds after which the state is refused. */
  expiresAt: number;
}

/** What the retry that presents a state must be. */
export type ExpectedCall = Pick<RequestStateClaims, 'ownerId' | 'tool' | 'argumentsHash' | 'dialect'>;

export type RequestStateProblem = 'malformed' | 'forged' | 'other-principal' | 'other-call' | 'expired';

/** Why a state was refused; the edge answers -32602 with the message. */
export class RequestStateError extends Error {
  constructor(
    readonly problem: RequestStateProblem,
    message: string,
    /** For an `expired` state: its claims, verified (ours, this caller's, this call's), so the server can end what it continues. */
    readonly expiredClaims?: RequestStateClaims,
  ) {
    super(message);
    this.name = 'RequestStateError';
  }
}

/**
 * The opaque state for `claims`: `v1.<claims>.<mac>`, all base64url. A random nonce makes
 * every round's state its own, even for the same operation within the same second.
 */
export function sealRequestState(claims: RequestStateClaims, key: Uint8Array): string {
  const payload = encodeBase64UrlJson({
    t: claims.token,
    o: claims.ownerId,
    n: claims.tool,
    a: claims.argumentsHash,
    d: claims.dialect,
    x: claims.expiresAt,
    r: randomBytes(9).toString('base64url'),
  });
  return `${VERSION}.${payload}.${mac(key, payload)}`;
}

/**
 * The claims of a state this server issued for exactly this call; throws RequestStateError
 * otherwise. The MAC is checked before anything in the state is read.
 */
export function openRequestState(state: unknown, key: Uint8Array, expected: ExpectedCall, nowMs: number): RequestStateClaims {
  if (typeof state !== 'string' || state.length > MAX_REQUEST_STATE_LENGTH) throw malformed();
  const [version, payload, given, ...rest] = state.split('.');
  if (version !== VERSION || !payload || !given || rest.length > 0) throw malformed();
  const wanted = Buffer.from(mac(key, payload), 'base64url');
  const presented = Buffer.from(given, 'base64url');
  if (presented.length !== wanted.length || !timingSafeEqual(presented, wanted)) {
    throw new RequestStateError('forged', 'Invalid requestState: it was not issued by this server or was changed');
  }
  const claims = claimsOf(decodeBase64UrlJson(payload));
  if (!claims) throw malformed();
  if (claims.ownerId !== expected.ownerId) throw new RequestStateError('other-principal', 'Invalid requestState: it was issued to another caller');
  if (claims.tool !== expected.tool || claims.argumentsHash !== expected.argumentsHash || claims.dialect !== expected.dialect) {
    throw new RequestStateError('other-call', 'Invalid requestState: it was issued for another call; retry the same tool with the same arguments');
  }
  if (claims.expiresAt * 1000 <= nowMs) throw new RequestStateError('expired', 'Invalid requestState: it has expired; call the tool again without it', claims);
  return claims;
}

function mac(key: Uint8Array, payload: string): string {
  return createHmac('sha256', key).update(MAC_LABEL).update(payload).digest('base64url');
}

function malformed(): RequestStateError {
  return new RequestStateError('malformed', 'Invalid requestState: it is not a state this server issued');
}

const DIALECTS: readonly Dialect[] = ['sep-1391', 'tasks-2026-07-28', 'tasks-2025-11-25', 'sync', 'handle'];

/** The claims a verified payload holds; `undefined` when it is not one we wrote. */
function claimsOf(value: Record<string, unknown> | undefined): RequestStateClaims | undefined {
  if (!value) return undefined;
  const { t, o, n, a, d, x } = value;
  if (typeof t !== 'string' || typeof o !== 'string' || typeof n !== 'string' || typeof a !== 'string') return undefined;
  if (!DIALECTS.includes(d as Dialect) || typeof x !== 'number') return undefined;
  return { token: t, ownerId: o, tool: n, argumentsHash: a, dialect: d as Dialect, expiresAt: x };
}
