/**
 * The Events extension's cursors: "Cursors are opaque strings managed by the server. They
 * represent a position in the event stream." Ours hold a position in the principal's log
 * (event-log.ts), as base64url JSON. A cursor names only a place in the caller's own log, so
 * a forged one shows nothing of anyone else's: it needs no signature.
 */
import { decodeBase64UrlJson, encodeBase64UrlJson } from '../shared/json-values.ts';
import { timeOfPosition } from './event-log.ts';

/** The longest cursor read; ours are under a hundred characters. */
const MAX_CURSOR_LENGTH = 512;
const VERSION = 1;

export function encodeEventCursor(position: string): string {
  return encodeBase64UrlJson({ v: VERSION, p: position });
}

/** The position a cursor holds, or `undefined` when it is not one this server issued. */
export function decodeEventCursor(cursor: string): string | undefined {
  if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
  const value = decodeBase64UrlJson(cursor);
  if (value?.v !== VERSION || typeof value.p !== 'string') return undefined;
  return timeOfPosition(value.p) === undefined ? undefined : value.p;
}
