/** Stable hashes the core derives its identities from. */
import { createHash, createHmac, randomBytes } from 'node:crypto';

/** JSON with object keys sorted, so equal arguments hash equally whatever their key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}

/** The idempotency fingerprint of a call: same tool and arguments, same hash. */
export function argumentsHash(tool: string, args: unknown): string {
  return sha256(canonicalJson({ tool, arguments: args ?? {} })).toString('base64url');
}

/**
 * The owner id stored on records: a hash of the authenticated principal, so records
 * never carry the principal itself and keys stay a fixed shape.
 */
export function ownerIdFor(principal: string): string {
  return sha256(`principal\n${principal}`).subarray(0, 16).toString('hex');
}

/**
 * The owner id operation events carry: an HMAC-SHA-256 of the record's owner id under the
 * server key. Events leave the trust boundary, and the unkeyed {@link ownerIdFor} lets whoever
 * reads them test candidate principals offline; this one needs the key. Stable for a principal
 * while the key is; the label keeps it apart from the key's other MACs.
 */
export function eventOwnerIdFor(ownerId: string, serverKey: Uint8Array): string {
  return createHmac('sha256', serverKey).update(`async-mcp event owner\n${ownerId}`).digest().subarray(0, 16).toString('hex');
}

/**
 * Step Functions execution name, fixed when the record is created: a retry after a
 * crash re-derives the same name, so StartExecution never starts the work twice.
 * 80 characters max of [A-Za-z0-9_-].
 */
export function executionNameFor(ownerId: string, token: string, createdAt: number): string {
  return `op-${sha256(`${ownerId}\n${token}\n${createdAt}`).toString('base64url').slice(0, 43)}`;
}

/** A server-minted id with 128 random bits (base64url, 22 characters). */
export function mintId(): string {
  return randomBytes(16).toString('base64url');
}
