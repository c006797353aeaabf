/**
 * The principal of a request to the local stack without OAuth: every distinct bearer token is
 * its own (so two clients can be two users); requests without one share the "local" principal.
 * Only hashes are kept.
 */
import { createHash } from 'node:crypto';

export function principalOf(request: Request): string {
  const auth = request.headers.get('authorization');
  const token = auth?.match(/^Bearer\s+(.+)$/i)?.[1];
  return token ? `bearer:${createHash('sha256').update(token).digest('hex')}` : 'local';
}
