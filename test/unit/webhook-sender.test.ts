/**
 * The webhook sender, as SEP-3415's "SSRF prevention" asks: the guard runs at delivery time and
 * refuses before any socket opens; the socket connects to the checked address and nowhere else;
 * "Webhook delivery requests MUST NOT follow HTTP redirects"; bounded time and answer size.
 * Real POSTs go only to receivers on 127.0.0.1 (local mode); the AWS-mode cases stop every socket
 * at `connect`, so nothing leaves the machine.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Webhook } from 'standardwebhooks';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { ResolveHost } from '../../lambdas/events/webhooks/callback-url-guard.ts';
import { generateWebhookSecret, parseWebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { classifyWebhookSend, MAX_WEBHOOK_BODY_BYTES, sendWebhook } from '../../lambdas/events/webhooks/webhook-sender.ts';
import { signWebhook } from '../../lambdas/events/webhooks/webhook-signature.ts';

interface Received {
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
  readonly url: string;
}

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  vi.restoreAllMocks();
  for (const close of closers.splice(0).reverse()) await close();
});

/** A receiver on 127.0.0.1 that records each request and answers with `answer`. */
async function receiver(
  answer: (request: http.IncomingMessage, response: http.ServerResponse) => void,
  server: http.Server | https.Server = http.createServer(),
) {
  const received: Received[] = [];
  server.on('request', (request: http.IncomingMessage, response: http.ServerResponse) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      received.push({ headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), url: request.url ?? '' });
      answer(request, response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { received, port: (server.address() as AddressInfo).port };
}

const secretText = generateWebhookSecret();
function signedPost(url: string, body = JSON.stringify({ eventId: 'evt_1', name: 'operation.finished', timestamp: '2026-10-05T12:00:00Z', data: {} })) {
  const check = parseWebhookSecret(secretText);
  if (!check.ok) throw new Error(check.reason);
  return { url, subscriptionId: 'sub_0123456789abcdef', body, headers: { ...signWebhook({ id: 'evt_1', body, secrets: [check.secret] }) } };
}

/** Stops every socket at `connect`: records what it would connect to, then fails it as refused. */
function stopSocketsAtConnect(opened: { host: unknown; servername: unknown; resolved: unknown }[], fail = true) {
  return vi.spyOn(net.Socket.prototype, 'connect').mockImplementation(function (this: net.Socket, ...args: unknown[]) {
    const options = (Array.isArray(args[0]) ? args[0][0] : args[0]) as { host?: string; servername?: string; lookup?: net.LookupFunction };
    const entry = { host: options.host, servername: options.servername, resolved: undefined as unknown };
    options.lookup?.(options.host ?? '', { all: true }, (_error, addresses) => {
      entry.resolved = addresses;
    });
    opened.push(entry);
    if (fail) setImmediate(() => this.destroy(Object.assign(new Error('connect ECONNREFUSED (stopped by the test)'), { code: 'ECONNREFUSED' })));
    return this;
  });
}

const resolverOf = (...addresses: string[]) => vi.fn<ResolveHost>(async () => addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));

describe('webhook sender', () => {
  it('POSTs the exact signed body with the Standard Webhooks headers and X-MCP-Subscription-Id, and returns the answer', async () => {
    const { received, port } = await receiver((_request, response) =>
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"challenge":"n1"}'),
    );
    const post = signedPost(`http://127.0.0.1:${port}/hooks?key=k1`);
    const result = await sendWebhook(post, { mode: 'local' });
    expect(result).toEqual({ status: 200, bodyText: '{"challenge":"n1"}' });
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.url).toBe('/hooks?key=k1');
    expect(request?.body).toBe(post.body);
    expect(request?.headers).toMatchObject({ 'content-type': 'application/json', 'x-mcp-subscription-id': 'sub_0123456789abcdef', host: `127.0.0.1:${port}` });
    const headers = {
      'webhook-id': String(request?.headers['webhook-id']),
      'webhook-timestamp': String(request?.headers['webhook-timestamp']),
      'webhook-signature': String(request?.headers['webhook-signature']),
    };
    expect(new Webhook(secretText).verify(request?.body ?? '', headers)).toEqual(JSON.parse(post.body));
  });

  it('reaches localhost at 127.0.0.1, keeping the name in Host', async () => {
    const { received, port } = await receiver((_request, response) => response.writeHead(204).end());
    expect(await sendWebhook(signedPost(`http://localhost:${port}/h`), { mode: 'local' })).toEqual({ status: 204, bodyText: '' });
    expect(received[0]?.headers.host).toBe(`localhost:${port}`);
  });

  it('refuses a host that resolves to the metadata address before any socket opens', async () => {
    const opened: { host: unknown; servername: unknown; resolved: unknown }[] = [];
    stopSocketsAtConnect(opened);
    const resolve = resolverOf('169.254.169.254');
    const result = await sendWebhook(signedPost('https://metadata.example.com/latest'), { mode: 'aws', resolve });
    expect(result).toMatchObject({ error: 'refused_address' });
    expect(resolve).toHaveBeenCalledOnce();
    expect(opened).toEqual([]);
  });

  it.each([
    ['a private address', 'https://hooks.example.com/', ['10.0.0.8']],
    ['one private address among public ones', 'https://hooks.example.com/', ['93.184.216.34', '192.168.1.1']],
    ['an IPv4-mapped loopback', 'https://hooks.example.com/', ['::ffff:127.0.0.1']],
    ['plain http in AWS', 'http://hooks.example.com/', ['93.184.216.34']],
    ['a loopback literal in AWS', 'https://127.0.0.1:8443/', []],
    ['a public host in local mode', 'https://hooks.example.com/', ['93.184.216.34']],
  ])('refuses %s without opening a socket', async (name, url, answers) => {
    const opened: { host: unknown; servername: unknown; resolved: unknown }[] = [];
    stopSocketsAtConnect(opened);
    const mode = name.includes('local mode') ? 'local' : 'aws';
    const result = await sendWebhook(signedPost(url), { mode, resolve: resolverOf(...answers) });
    expect(result).toMatchObject({ error: expect.stringMatching(/^(refused_address|invalid_url)$/) });
    expect(opened).toEqual([]);
  });

  it('connects to the checked address with the hostname as SNI, and never looks the name up again', async () => {
    const opened: { host: unknown; servername: unknown; resolved: unknown }[] = [];
    stopSocketsAtConnect(opened);
    const resolve = resolverOf('93.184.216.34', '2606:2800:220:1:248:1893:25c8:1946');
    const result = await sendWebhook(signedPost('https://hooks.example.com/mcp'), { mode: 'aws', resolve });
    expect(result).toMatchObject({ error: 'connection_refused' });
    expect(resolve).toHaveBeenCalledOnce();
    expect(opened).toEqual([{ host: 'hooks.example.com', servername: 'hooks.example.com', resolved: [{ address: '93.184.216.34', family: 4 }] }]);
  });

  it('refuses a body over 256 KiB before any lookup or socket', async () => {
    const opened: { host: unknown; servername: unknown; resolved: unknown }[] = [];
    stopSocketsAtConnect(opened);
    const resolve = resolverOf('93.184.216.34');
    const body = JSON.stringify({ data: 'x'.repeat(MAX_WEBHOOK_BODY_BYTES) });
    expect(await sendWebhook(signedPost('https://hooks.example.com/', body), { mode: 'aws', resolve })).toMatchObject({ error: 'body_too_large' });
    expect(resolve).not.toHaveBeenCalled();
    expect(opened).toEqual([]);
  });

  it('does not follow a 302: the redirect is the answer, and its target hears nothing', async () => {
    const target = await receiver((_request, response) => response.writeHead(200).end('ok'));
    const { received, port } = await receiver((_request, response) => response.writeHead(302, { location: `http://127.0.0.1:${target.port}/elsewhere` }).end());
    const result = await sendWebhook(signedPost(`http://127.0.0.1:${port}/hooks`), { mode: 'local' });
    expect(result).toEqual({ status: 302, bodyText: '' });
    expect(classifyWebhookSend(result)).toEqual({ delivered: false, retry: true, lastError: 'http_4xx' });
    expect(received).toHaveLength(1);
    expect(target.received).toEqual([]);
  });

  it('gives up on a receiver that never answers, as a timeout', async () => {
    const { received, port } = await receiver(() => {
      /* never answers */
    });
    const result = await sendWebhook(signedPost(`http://127.0.0.1:${port}/slow`), { mode: 'local', totalTimeoutMs: 300 });
    expect(result).toMatchObject({ error: 'timeout' });
    expect(received).toHaveLength(1);
  });

  it('gives up on a connection that never opens, as a timeout', async () => {
    const opened: { host: unknown; servername: unknown; resolved: unknown }[] = [];
    stopSocketsAtConnect(opened, false);
    const result = await sendWebhook(signedPost('https://hooks.example.com/'), { mode: 'aws', resolve: resolverOf('93.184.216.34'), connectTimeoutMs: 100 });
    expect(result).toMatchObject({ error: 'timeout', detail: expect.stringContaining('no connection') });
    expect(opened).toHaveLength(1);
  });

  it('reads at most maxAnswerBytes of a large answer', async () => {
    const { port } = await receiver((_request, response) => {
      response.writeHead(200);
      response.end('y'.repeat(1024 * 1024));
    });
    const result = await sendWebhook(signedPost(`http://127.0.0.1:${port}/big`), { mode: 'local', maxAnswerBytes: 4096 });
    expect(result).toEqual({ status: 200, bodyText: 'y'.repeat(4096) });
  });

  it('says connection_refused when nothing listens', async () => {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise<void>((resolve) => server.close(() => resolve()));
    const result = await sendWebhook(signedPost(`http://127.0.0.1:${port}/`), { mode: 'local' });
    expect(result).toMatchObject({ error: 'connection_refused' });
    expect(classifyWebhookSend(result)).toEqual({ delivered: false, retry: true, lastError: 'connection_refused' });
  });

  it('classifies answers as SEP-3415 says: 2xx delivered, 410 and 413 final, others retried', () => {
    expect(classifyWebhookSend({ status: 204, bodyText: '' })).toEqual({ delivered: true });
    expect(classifyWebhookSend({ status: 503, bodyText: '' })).toEqual({ delivered: false, retry: true, lastError: 'http_5xx' });
    expect(classifyWebhookSend({ status: 410, bodyText: '' })).toEqual({ delivered: false, retry: false, lastError: 'http_4xx' });
    expect(classifyWebhookSend({ status: 413, bodyText: '' })).toEqual({ delivered: false, retry: false, lastError: 'http_4xx' });
    expect(classifyWebhookSend({ error: 'refused_address', detail: '' })).toEqual({ delivered: false, retry: true, lastError: 'connection_refused' });
    expect(classifyWebhookSend({ error: 'body_too_large', detail: '' })).toMatchObject({ delivered: false, retry: false });
  });
});

const exec = promisify(execFile);
const openssl = await exec('openssl', ['version']).then(
  () => true,
  () => false,
);

describe.skipIf(!openssl)('webhook sender over https (needs the openssl command)', () => {
  async function selfSigned() {
    const dir = await mkdtemp(path.join(tmpdir(), 'webhook-tls-'));
    closers.push(() => rm(dir, { recursive: true, force: true }));
    const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
    await exec('openssl', [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=DNS:localhost',
    ]);
    return { key: await readFile(key), cert: await readFile(cert) };
  }

  it('sends the hostname as SNI to the pinned address, and verifies the certificate against it', async () => {
    const { key, cert } = await selfSigned();
    const server = https.createServer({ key, cert });
    const names: (string | false | null)[] = [];
    server.on('secureConnection', (socket) => names.push(socket.servername));
    const { received, port } = await receiver((_request, response) => response.writeHead(200).end('ok'), server);
    expect(await sendWebhook(signedPost(`https://localhost:${port}/tls`), { mode: 'local', ca: cert })).toEqual({ status: 200, bodyText: 'ok' });
    expect(names).toEqual(['localhost']);
    expect(received).toHaveLength(1);
    // Without the CA the self-signed certificate is refused: verification stays on.
    expect(await sendWebhook(signedPost(`https://localhost:${port}/tls`), { mode: 'local' })).toMatchObject({ error: 'tls_error' });
  });
});
