/**
 * requestState (SEP-2322): "servers MUST protect its integrity (e.g. HMAC or AEAD) and MUST
 * reject state that fails verification", bound to the principal, the call and an expiry.
 */
import { describe, expect, it } from 'vitest';
import { argumentsHash } from '../../lambdas/operations/fingerprint.ts';
import {
  MAX_REQUEST_STATE_LENGTH,
  openRequestState,
  RequestStateError,
  sealRequestState,
  type ExpectedCall,
  type RequestStateClaims,
} from '../../lambdas/mcp/input/request-state.ts';

const KEY = new Uint8Array(32).fill(7);
const NOW = 1_700_000_000_000;
const CLAIMS: RequestStateClaims = {
  token: 'sync-abc',
  ownerId: 'owner-alice',
  tool: 'ask_confirm',
  argumentsHash: 'hash-1',
  dialect: 'sync',
  expiresAt: NOW / 1000 + 900,
};
const EXPECTED: ExpectedCall = { ownerId: CLAIMS.ownerId, tool: CLAIMS.tool, argumentsHash: CLAIMS.argumentsHash, dialect: CLAIMS.dialect };

function refusal(state: unknown, expected: ExpectedCall = EXPECTED, now = NOW, key = KEY): RequestStateError {
  try {
    openRequestState(state, key, expected, now);
  } catch (error) {
    expect(error).toBeInstanceOf(RequestStateError);
    return error as RequestStateError;
  }
  throw new Error('the state was accepted');
}

/** The state with one character of its `part` (0 version, 1 claims, 2 mac) changed. */
function flipped(state: string, part: number): string {
  const parts = state.split('.');
  const text = parts[part]!;
  const i = Math.floor(text.length / 2);
  parts[part] = text.slice(0, i) + (text[i] === 'A' ? 'B' : 'A') + text.slice(i + 1);
  return parts.join('.');
}

describe('requestState', () => {
  it('round-trips: a sealed state opens to the same claims for the same call, principal and key', () => {
    const state = sealRequestState(CLAIMS, KEY);
    expect(state).toMatch(/^v1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    expect(openRequestState(state, KEY, EXPECTED, NOW)).toEqual(CLAIMS);
  });

  it('each state is its own: sealing the same claims twice gives two states, both valid', () => {
    const [one, two] = [sealRequestState(CLAIMS, KEY), sealRequestState(CLAIMS, KEY)];
    expect(one).not.toBe(two);
    expect(openRequestState(two, KEY, EXPECTED, NOW)).toEqual(CLAIMS);
  });

  it('a tampered state is refused as forged: changed claims, a changed MAC, or claims re-encoded by the client', () => {
    const state = sealRequestState(CLAIMS, KEY);
    expect(refusal(flipped(state, 1)).problem).toBe('forged');
    expect(refusal(flipped(state, 2)).problem).toBe('forged');
    const [version, payload, mac] = state.split('.');
    const claims = JSON.parse(Buffer.from(payload!, 'base64url').toString('utf8')) as Record<string, unknown>;
    const rewritten = Buffer.from(JSON.stringify({ ...claims, o: 'owner-mallory' })).toString('base64url');
    expect(refusal(`${version}.${rewritten}.${mac}`).problem).toBe('forged');
  });

  it('a state signed with another key is refused as forged', () => {
    const state = sealRequestState(CLAIMS, new Uint8Array(32).fill(8));
    expect(refusal(state).problem).toBe('forged');
  });

  it('anything that is not a state of ours is refused as malformed, before any MAC is computed on it', () => {
    for (const state of [42, null, '', 'v1', 'v1.a', 'v2.a.b', 'v1.a.b.c', `v1.${'a'.repeat(MAX_REQUEST_STATE_LENGTH)}.b`]) {
      expect(refusal(state).problem).toBe('malformed');
    }
  });

  it('an expired state is refused, and one about to expire is still accepted', () => {
    const state = sealRequestState(CLAIMS, KEY);
    expect(openRequestState(state, KEY, EXPECTED, CLAIMS.expiresAt * 1000 - 1)).toEqual(CLAIMS);
    const expired = refusal(state, EXPECTED, CLAIMS.expiresAt * 1000);
    expect(expired.problem).toBe('expired');
    expect(expired.message).toMatch(/expired/);
  });

  it('another principal presenting the state is refused', () => {
    const error = refusal(sealRequestState(CLAIMS, KEY), { ...EXPECTED, ownerId: 'owner-bob' });
    expect(error.problem).toBe('other-principal');
    expect(error.message).toMatch(/another caller/);
  });

  it('a retry of another tool, other arguments or another wire is refused', () => {
    const state = sealRequestState(CLAIMS, KEY);
    for (const other of [{ tool: 'ask_two' }, { argumentsHash: 'hash-2' }, { dialect: 'tasks-2026-07-28' as const }]) {
      const error = refusal(state, { ...EXPECTED, ...other });
      expect(error.problem).toBe('other-call');
      expect(error.message).toMatch(/another call/);
    }
  });

  it('the state holds a digest of the arguments, never the arguments themselves', () => {
    const args = { subject: 'launch codes 1234' };
    const state = sealRequestState({ ...CLAIMS, argumentsHash: argumentsHash('ask_confirm', args) }, KEY);
    const claims = Buffer.from(state.split('.')[1]!, 'base64url').toString('utf8');
    expect(claims).not.toContain('launch codes');
    expect(openRequestState(state, KEY, { ...EXPECTED, argumentsHash: argumentsHash('ask_confirm', args) }, NOW).argumentsHash).toBe(
      argumentsHash('ask_confirm', args),
    );
  });
});
