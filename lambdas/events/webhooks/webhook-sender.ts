/**
 * One POST of one webhook body, hardened as SEP-3415's "SSRF prevention" asks: the callback URL
 * goes through the guard at delivery time, the socket connects to the address the guard checked
 * (the request's `lookup` returns that address, so there is no second lookup to rebind), TLS SNI
 * and `Host` keep the hostname, no redirect is followed (a 3xx is an answer, never a new request),
 * connect and total time are bounded, and at most a few KiB of the answer are read.
 */
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { type CallbackMode, type CheckedCallback, checkCallbackUrl, type ResolveHost } from './callback-url-guard.ts';

/** SEP-3415's delivery profile: "Servers SHOULD keep delivery bodies at or under 256 KiB." */
export const MAX_WEBHOOK_BODY_BYTES = 256 * 1024;

/** One body for one subscription's callback. */
export interface WebhookPost {
  /** The subscription's callback URL, as stored; checked again here, at delivery time. */
  readonly url: string;
  /** Sent as `X-MCP-Subscription-Id`. */
  readonly subscriptionId: string;
  /** The exact JSON text the signature covers. */
  readonly body: string;
  /** The Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature`). */
  readonly headers: Readonly<Record<string, string>>;
}

export interface WebhookSenderOptions {
  readonly mode: CallbackMode;
  /** @default the system resolver */
  readonly resolve?: ResolveHost;
  /** From the start of the connection to an open socket (TLS included). @default 3000 */
  readonly connectTimeoutMs?: number;
  /** From the lookup to the last byte read of the answer. @default 10000 */
  readonly totalTimeoutMs?: number;
  /** How much of the answer is kept; the rest is never read. @default 4096 */
  readonly maxAnswerBytes?: number;
  /** Extra certificate authorities to trust, beside the system's (a local receiver's self-signed certificate). */
  readonly ca?: string | Buffer;
}

/** Why a POST got no HTTP answer. The first three are the guard's refusals; no connection was opened for them. */
export type WebhookSendError =
  | 'invalid_url'
  | 'refused_address'
  | 'unresolvable'
  | 'body_too_large'
  | 'connection_refused'
  | 'timeout'
  | 'tls_error'
  | 'connection_failed';

/** An HTTP answer (any status, 3xx included, never followed), or why there was none; `detail` is for logs, never for clients. */
export type WebhookSendResult = { readonly status: number; readonly bodyText: string } | { readonly error: WebhookSendError; readonly detail: string };

/** Sends one POST, as {@link WebhookSenderOptions} bounds it; never throws. */
export type WebhookSender = (post: WebhookPost) => Promise<WebhookSendResult>;

/** A sender with these options: the guard's mode and resolver, the timeouts and the answer cap. */
export function createWebhookSender(options: WebhookSenderOptions): WebhookSender {
  return (post) => sendWebhook(post, options);
}

/** Sends one POST; see the module comment for what it guarantees. */
export async function sendWebhook(post: WebhookPost, options: WebhookSenderOptions): Promise<WebhookSendResult> {
  const bodyBytes = Buffer.from(post.body, 'utf8');
  if (bodyBytes.length > MAX_WEBHOOK_BODY_BYTES)
    return { error: 'body_too_large', detail: `the body is ${bodyBytes.length} bytes, more than ${MAX_WEBHOOK_BODY_BYTES}` };
  if (!/^[\x21-\x7e]+$/.test(post.subscriptionId)) return { error: 'invalid_url', detail: 'the subscription id cannot be a header value' };
  const totalMs = options.totalTimeoutMs ?? 10_000;
  const deadline = Date.now() + totalMs;
  let timer: NodeJS.Timeout | undefined;
  const lookupTimedOut = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), totalMs);
  });
  try {
    const check = await Promise.race([checkCallbackUrl(post.url, { mode: options.mode, resolve: options.resolve }), lookupTimedOut]);
    if (check === 'timeout') return { error: 'timeout', detail: `the callback host did not resolve within ${totalMs} ms` };
    if (!check.ok) return { error: check.refusal, detail: check.reason };
    return await postTo(check.callback, post, bodyBytes, options, Math.max(1, deadline - Date.now()));
  } finally {
    clearTimeout(timer);
  }
}

function postTo(callback: CheckedCallback, post: WebhookPost, body: Buffer, options: WebhookSenderOptions, remainingMs: number): Promise<WebhookSendResult> {
  const { url, hostname, address, family } = callback;
  const secure = url.protocol === 'https:';
  const maxAnswerBytes = options.maxAnswerBytes ?? 4096;
  // The checked address, whatever the socket asks for: `all` with autoSelectFamily, one address otherwise.
  const pinned: LookupFunction = (_name, lookupOptions, done) => {
    if (lookupOptions.all) (done as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address, family }]);
    else done(null, address, family);
  };
  return new Promise((resolve) => {
    let settled = false;
    let request: ClientRequest | undefined;
    const finish = (result: WebhookSendResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(totalTimer);
      request?.destroy();
      resolve(result);
    };
    const connectMs = options.connectTimeoutMs ?? 3000;
    const connectTimer = setTimeout(() => finish({ error: 'timeout', detail: `no connection to ${hostname} within ${connectMs} ms` }), connectMs);
    const totalTimer = setTimeout(() => finish({ error: 'timeout', detail: `no complete answer from ${hostname} within the delivery's time` }), remainingMs);
    const requestOptions: https.RequestOptions = {
      method: 'POST',
      hostname,
      port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
      path: `${url.pathname}${url.search}`,
      lookup: pinned,
      // A connection of its own: a pooled socket was opened for some earlier check.
      agent: false,
      headers: {
        ...post.headers,
        host: url.host,
        'content-type': 'application/json',
        'content-length': String(body.length),
        'x-mcp-subscription-id': post.subscriptionId,
        'user-agent': 'async-mcp-webhooks',
      },
      ...(secure && isIP(hostname) === 0 ? { servername: hostname } : {}),
      ...(options.ca ? { ca: options.ca } : {}),
    };
    // node:http on use only: https callbacks never need it, and importing it costs a cold start ~25 ms.
    request = (secure ? https : process.getBuiltinModule('node:http')).request(requestOptions, (answer) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      const done = () => finish({ status: answer.statusCode ?? 0, bodyText: Buffer.concat(chunks).toString('utf8') });
      answer.on('data', (chunk: Buffer) => {
        const room = maxAnswerBytes - kept;
        if (room > 0) chunks.push(chunk.subarray(0, room));
        kept += Math.min(room, chunk.length);
        // Enough: the rest is never read, and the connection goes.
        if (kept >= maxAnswerBytes) done();
      });
      answer.on('end', done);
      answer.on('error', (error) => finish(failure(error)));
    });
    request.on('socket', (socket) => {
      const opened = () => clearTimeout(connectTimer);
      if (secure) socket.once('secureConnect', opened);
      else if (socket.connecting) socket.once('connect', opened);
      else opened();
    });
    request.on('error', (error) => finish(failure(error)));
    request.end(body);
  });
}

const TLS_CODES = /^(ERR_TLS_|ERR_SSL_|CERT_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_|EPROTO|HOSTNAME_MISMATCH)/;

/** A socket error as the SEP's `lastError` vocabulary sees it; the message stays in `detail`, for logs. */
function failure(error: Error & { code?: string }): WebhookSendResult {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return { error: 'connection_refused', detail: error.message };
  if (TLS_CODES.test(code)) return { error: 'tls_error', detail: `${code}: ${error.message}` };
  if (code === 'ETIMEDOUT') return { error: 'timeout', detail: error.message };
  return { error: 'connection_failed', detail: code ? `${code}: ${error.message}` : error.message };
}

/** SEP-3415's `lastError` categories. */
export type WebhookLastError = 'connection_refused' | 'timeout' | 'tls_error' | 'http_4xx' | 'http_5xx';

/**
 * What one POST came to, in SEP-3415's terms: a 2xx is delivered; 410 and 413 "MUST" not be
 * retried, nor can a body too large or a URL that is no URL; anything else is retried with backoff.
 * A redirect is a failure (never followed) and counts with the 4xx; a refused or unresolvable
 * address counts as `connection_refused`, so that no category tells a client what lies behind a URL.
 */
export function classifyWebhookSend(
  result: WebhookSendResult,
): { readonly delivered: true } | { readonly delivered: false; readonly retry: boolean; readonly lastError: WebhookLastError } {
  if ('status' in result) {
    if (result.status >= 200 && result.status < 300) return { delivered: true };
    const retry = result.status !== 410 && result.status !== 413;
    return { delivered: false, retry, lastError: result.status >= 500 ? 'http_5xx' : 'http_4xx' };
  }
  switch (result.error) {
    case 'body_too_large':
      return { delivered: false, retry: false, lastError: 'http_4xx' };
    case 'invalid_url':
      return { delivered: false, retry: false, lastError: 'connection_refused' };
    case 'refused_address':
    case 'unresolvable':
    case 'connection_refused':
    case 'connection_failed':
      return { delivered: false, retry: true, lastError: 'connection_refused' };
    case 'timeout':
      return { delivered: false, retry: true, lastError: 'timeout' };
    case 'tls_error':
      return { delivered: false, retry: true, lastError: 'tls_error' };
  }
}
