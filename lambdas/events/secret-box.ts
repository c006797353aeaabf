/**
 * Webhook signing secrets at rest: sealed with AES-256-GCM under a key derived (HKDF-SHA256)
 * from the server's key, so the table holds no secret a reader could sign with. The owner
 * and subscription id are the additional data: a sealed secret moved to another item does
 * not open.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

const PREFIX = 'v1.';
const INFO = 'async-mcp webhook signing secrets v1';

export interface SecretBox {
  seal(secret: string, context: string): string;
  /** The secret, or an error when the sealed text was altered, moved, or sealed under another key. */
  open(sealed: string, context: string): string;
}

/** A box over the server's key (32 bytes or more). */
export function secretBoxFor(serverKey: Uint8Array): SecretBox {
  const key = Buffer.from(hkdfSync('sha256', serverKey, Buffer.alloc(0), INFO, 32));
  return {
    seal(secret, context) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      cipher.setAAD(Buffer.from(context, 'utf8'));
      const sealed = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${PREFIX}${Buffer.concat([iv, cipher.getAuthTag(), sealed]).toString('base64url')}`;
    },
    open(sealed, context) {
      if (!sealed.startsWith(PREFIX)) throw new Error('not a sealed secret');
      const raw = Buffer.from(sealed.slice(PREFIX.length), 'base64url');
      const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, 12));
      decipher.setAAD(Buffer.from(context, 'utf8'));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString('utf8');
    },
  };
}
