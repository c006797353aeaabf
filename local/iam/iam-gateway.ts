/**
 * An IAM-enforcing reverse proxy in front of one local AWS service endpoint: it verifies each
 * request's SigV4 signature against the credentials the authority issued, derives the action(s)
 * and resource(s) IAM checks for it, asks the authority, and either forwards the request
 * unchanged (bodies streamed through) or answers with the service's own error shape.
 */
import { randomBytes } from 'node:crypto';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpRequest } from '@smithy/protocol-http';
import { SignatureV4 } from '@smithy/signature-v4';
import { accessDeniedMessage, type IamAuthority } from './iam-authority.ts';
import {
  lambdaCallbackId,
  MissingFieldError,
  NotAnOperationError,
  requestActions,
  s3Location,
  type ActionScope,
  type GatewayService,
  type RequestAction,
} from './request-actions.ts';
import { NodeSha256, verifySigV4, type VerifyResult } from './sigv4-verifier.ts';

export interface IamGatewayOptions {
  service: GatewayService;
  /** The service endpoint requests are forwarded to, e.g. `http://127.0.0.1:4567`. */
  upstream: string;
  authority: IamAuthority;
  /**
   * @deprecated Not used: the gateway always listens on 127.0.0.1, whatever the server's
   * `--host`. It holds the credentials of every role; only this machine may reach it.
   */
  host?: string;
  /** @default 0 (a free port) */
  port?: number;
  /** Re-sign forwarded requests with these (an upstream that checks its own keys, such as s3rver). */
  upstreamCredentials?: { accessKeyId: string; secretAccessKey: string };
  /** Lookups a request alone cannot answer: secret names -> ARNs, task tokens -> state machines, tables -> partition keys. */
  resolve?: Pick<ActionScope, 'secretArn' | 'stateMachineOfTaskToken' | 'partitionKeyOf'> & {
    /** Callback ids -> the durable execution that issued them; the service's state is read for it, so it may take a moment. */
    durableExecutionOfCallback?: (callbackId: string) => string | undefined | Promise<string | undefined>;
  };
  /** Denials and failures are reported here (never request bodies). @default console */
  logger?: Pick<Console, 'warn' | 'error'>;
}

export interface IamGateway {
  /** The URL to pass as the SDK client's `endpoint`. */
  endpoint: string;
  close(): Promise<void>;
}

/** Bodies of JSON services are small API requests; S3 bodies stream and are never held whole. */
const MAX_JSON_BODY = 64 * 1024 * 1024;
const JSON_CONTENT_TYPE: Record<Exclude<GatewayService, 's3'>, string> = {
  dynamodb: 'application/x-amz-json-1.0',
  states: 'application/x-amz-json-1.0',
  secretsmanager: 'application/x-amz-json-1.1',
  events: 'application/x-amz-json-1.1',
  sqs: 'application/x-amz-json-1.0',
  lambda: 'application/json',
};

/** Starts the gateway on a port of 127.0.0.1. */
export async function startIamGateway(options: IamGatewayOptions): Promise<IamGateway> {
  const host = '127.0.0.1';
  const logger = options.logger ?? console;
  const upstream = new URL(options.upstream);
  const { durableExecutionOfCallback, ...lookups } = options.resolve ?? {};
  const scope: ActionScope = { region: options.authority.region, accountId: options.authority.accountId, ...lookups };
  // Set by close(): a request still on its way upstream then is cut off by the close (its
  // caller's connection goes with it), and its upstream failing after that is no failure to report.
  let closing = false;
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (closing) {
        res.destroy();
        return;
      }
      logger.error(`IAM gateway (${options.service}): ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent)
        sendError(res, options.service, req.method ?? 'GET', 500, 'InternalFailure', 'The request processing has failed because of an unknown error.');
      else res.destroy();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://gateway');
    const headers = headerRecord(req);
    const method = req.method ?? 'GET';
    const isS3 = options.service === 's3';
    // Lambda is REST: the path names the resource, and a callback's body is the caller's bytes, not JSON.
    const isRest = isS3 || options.service === 'lambda';
    // JSON services: the body names the resource and is covered by the signature. S3: only a
    // multi-object delete names its keys in the body.
    const needsBody = !isS3 || (method === 'POST' && url.searchParams.has('delete'));
    const body = needsBody ? await readBody(req, MAX_JSON_BODY) : undefined;

    const verified = await verifySigV4(
      { method, host: headers.host ?? '', path: url.pathname, query: url.searchParams, headers, ...(body ? { body } : {}) },
      {
        service: options.service,
        lookup: (key) => options.authority.identify(key),
        uriEscapePath: !isS3,
      },
    );
    if (!verified.ok) {
      const [status, code, message] = signatureError(options.service, verified);
      logger.warn(`IAM gateway (${options.service}): ${method} ${url.pathname} refused: ${code}`);
      return sendError(res, options.service, method, status, code, message);
    }
    const identity = options.authority.identify(verified.authorization.accessKeyId);
    if (!identity) {
      // The verifier looked the key up a moment ago; answer as for a key never issued.
      const [status, code, message] = signatureError(options.service, { ok: false, problem: 'unknown-key' });
      return sendError(res, options.service, method, status, code, message);
    }

    // A callback's execution is looked up before its actions are derived, which is synchronous.
    const callbackId = options.service === 'lambda' ? lambdaCallbackId(method, url.pathname) : undefined;
    const owner = callbackId === undefined ? undefined : await durableExecutionOfCallback?.(callbackId);
    const requestScope: ActionScope = owner === undefined ? scope : { ...scope, durableExecutionOfCallback: () => owner };
    let actions: RequestAction[];
    try {
      const parsed = isRest ? body : parseJson(body);
      actions = requestActions(options.service, { method, path: url.pathname, query: url.searchParams, headers, body: parsed }, requestScope);
    } catch (error) {
      // A request that names no operation or resource: the service itself answers it
      // (UnknownOperationException, ValidationException, SerializationException), doing nothing.
      if (!(error instanceof MissingFieldError || error instanceof NotAnOperationError || error instanceof SyntaxError)) throw error;
      actions = [];
    }
    for (const { action, resource, context } of actions) {
      const decision = await options.authority.authorize({ principalArn: identity.assumedRoleArn, action, resource, ...(context ? { context } : {}) });
      if (!decision.allowed) {
        const message = isS3 ? accessDeniedMessage(identity.assumedRoleArn, action, resource, decision.reason, { quoteResource: true }) : decision.message;
        logger.warn(`IAM gateway (${options.service}): AccessDenied: ${message}`);
        return sendError(res, options.service, method, isRest ? 403 : 400, isS3 ? 'AccessDenied' : 'AccessDeniedException', message);
      }
    }
    await forward(req, res, { method, url, headers, body, identityArn: identity.assumedRoleArn, actions });
  }

  async function forward(
    req: IncomingMessage,
    res: ServerResponse,
    call: { method: string; url: URL; headers: Record<string, string | undefined>; body: Buffer | undefined; identityArn: string; actions: RequestAction[] },
  ): Promise<void> {
    let headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(call.headers)) if (value !== undefined) headers[name] = value;
    headers.host = upstream.host;
    if (options.upstreamCredentials)
      headers = await resign(call.method, call.url, headers, options.upstreamCredentials, options.service, options.authority.region);
    const upstreamRes = await new Promise<IncomingMessage>((resolve, reject) => {
      const out = httpRequest(
        {
          protocol: upstream.protocol,
          hostname: upstream.hostname,
          port: upstream.port,
          method: call.method,
          path: `${call.url.pathname}${call.url.search}`,
          headers,
        },
        resolve,
      );
      out.on('error', reject);
      if (call.body) out.end(call.body);
      else req.pipe(out);
    });
    // S3 answers a missing object with AccessDenied, not NoSuchKey, to a caller who may not list the bucket.
    const read = call.actions.find((a) => a.action === 's3:GetObject');
    if (options.service === 's3' && upstreamRes.statusCode === 404 && read && call.actions.length === 1) {
      const { bucket } = s3Location({ path: call.url.pathname, headers: call.headers });
      const bucketArn = `arn:aws:s3:::${bucket}`;
      const listing = await options.authority.authorize({ principalArn: call.identityArn, action: 's3:ListBucket', resource: bucketArn });
      if (!listing.allowed) {
        upstreamRes.resume();
        const message = accessDeniedMessage(call.identityArn, 's3:ListBucket', bucketArn, listing.reason, { quoteResource: true });
        return sendError(res, 's3', call.method, 403, 'AccessDenied', message);
      }
    }
    res.writeHead(upstreamRes.statusCode ?? 502, upstreamRes.headers);
    upstreamRes.pipe(res);
    await new Promise<void>((resolve, reject) => {
      res.on('finish', resolve);
      res.on('close', resolve);
      upstreamRes.on('error', reject);
    });
  }

  const { port } = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve(server.address() as AddressInfo));
  });
  return {
    endpoint: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        closing = true;
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** The service's answer to a request it cannot authenticate. */
function signatureError(service: GatewayService, verified: Extract<VerifyResult, { ok: false }>): [number, string, string] {
  if (service === 's3') {
    switch (verified.problem) {
      case 'missing':
        return [403, 'AccessDenied', 'Access Denied'];
      case 'unknown-key':
        return [403, 'InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
      case 'bad-token':
        return [400, 'InvalidToken', 'The provided token is malformed or otherwise invalid.'];
      case 'malformed':
      case 'wrong-scope':
        return [
          400,
          'AuthorizationHeaderMalformed',
          'The authorization header is malformed; the Credential is mal-formed; expecting "<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request".',
        ];
      case 'mismatch':
        return [
          403,
          'SignatureDoesNotMatch',
          'The request signature we calculated does not match the signature you provided. Check your key and signing method.',
        ];
      case 'expired':
        return [403, 'RequestTimeTooSkewed', 'The difference between the request time and the current time is too large.'];
    }
  }
  // Lambda answers an unauthenticated request with 403; the AWS JSON services with 400.
  const status = service === 'lambda' ? 403 : 400;
  switch (verified.problem) {
    case 'missing':
      return [status, 'MissingAuthenticationTokenException', 'Missing Authentication Token'];
    case 'unknown-key':
    case 'bad-token':
      return [status, 'UnrecognizedClientException', 'The security token included in the request is invalid.'];
    case 'malformed':
      return [status, 'IncompleteSignatureException', "Authorization header requires 'Credential', 'Signature' and 'SignedHeaders' parameters."];
    case 'wrong-scope':
      return [status, 'InvalidSignatureException', `Credential should be scoped to correct service: '${service}'.`];
    case 'mismatch':
      return [
        status,
        'InvalidSignatureException',
        'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.',
      ];
    case 'expired':
      return [status, 'InvalidSignatureException', verified.message];
  }
}

/** The error as the service shapes it: AWS JSON `__type` + message, or S3's XML `<Error>`. */
function sendError(res: ServerResponse, service: GatewayService, method: string, status: number, code: string, message: string): void {
  const requestId = randomBytes(16).toString('hex').toUpperCase();
  if (service === 's3') {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?>\n' +
      `<Error><Code>${code}</Code><Message>${escapeXml(message)}</Message><RequestId>${requestId}</RequestId><HostId>${randomBytes(24).toString('base64')}</HostId></Error>`;
    // A HEAD answer has no body: the SDK names the error from the status alone.
    res.writeHead(status, {
      'content-type': 'application/xml',
      'x-amz-request-id': requestId,
      ...(method === 'HEAD' ? {} : { 'content-length': Buffer.byteLength(xml) }),
    });
    res.end(method === 'HEAD' ? undefined : xml);
    return;
  }
  // Secrets Manager spells its message member "Message"; DynamoDB and Step Functions "message";
  // Lambda (restJson1) names the error in the header alone, with a `{ Type, Message }` body.
  const body =
    service === 'lambda'
      ? JSON.stringify({ Type: 'User', Message: message })
      : JSON.stringify({ __type: `com.amazon.coral.service#${code}`, [service === 'secretsmanager' ? 'Message' : 'message']: message });
  res.writeHead(status, {
    'content-type': JSON_CONTENT_TYPE[service],
    'content-length': Buffer.byteLength(body),
    'x-amzn-requestid': requestId,
    'x-amzn-errortype': `${code}:http://internal.amazon.com/coral/com.amazon.coral.service/`,
  });
  res.end(body);
}

/** Signs the forwarded request with the upstream's own key, over the same payload hash. */
async function resign(
  method: string,
  url: URL,
  headers: Record<string, string>,
  credentials: { accessKeyId: string; secretAccessKey: string },
  service: GatewayService,
  region: string,
): Promise<Record<string, string>> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name !== 'authorization' && name !== 'x-amz-security-token' && name !== 'x-amz-date') kept[name] = value;
  }
  kept['x-amz-content-sha256'] ??= 'UNSIGNED-PAYLOAD';
  const query: Record<string, string> = {};
  for (const [name, value] of url.searchParams) query[name] = value;
  const signer = new SignatureV4({ service, region, credentials, sha256: NodeSha256, uriEscapePath: service !== 's3', applyChecksum: false });
  const signed = await signer.sign(new HttpRequest({ method, protocol: 'http:', hostname: headers.host ?? '', path: url.pathname, query, headers: kept }));
  return signed.headers;
}

function headerRecord(req: IncomingMessage): Record<string, string | undefined> {
  const out: Record<string, string | undefined> = {};
  for (const [name, value] of Object.entries(req.headers)) out[name] = Array.isArray(value) ? value.join(',') : value;
  return out;
}

function readBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        reject(new Error(`request body over ${limit} bytes`));
        req.destroy();
      } else chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function parseJson(body: Buffer | undefined): unknown {
  return body?.length ? JSON.parse(body.toString('utf8')) : {};
}

function escapeXml(text: string): string {
  return text.replace(/[<>&"']/g, (c) => ({ '<': '&lt;', '>': '&gt;', '&': '&amp;', '"': '&quot;', "'": '&apos;' })[c] ?? c);
}
