/**
 * An HTTP request as a Lambda Function URL hands it to the function: the payload format 2.0
 * event (https://docs.aws.amazon.com/lambda/latest/dg/urls-invocation.html#urls-payloads).
 * Header names are lower-cased and repeated headers comma-joined; the cookie header moves to
 * `cookies`; a text body is passed as is and any other body base64-encoded; `requestContext`
 * carries the caller under AWS_IAM (`authorizer.iam`) and `accountId: "anonymous"` under NONE.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { LambdaFunctionURLEvent } from 'aws-lambda';

/** What the URL knows of one request. */
export interface FunctionUrlRequest {
  method: string;
  /** The request target as sent: path and query, still percent-encoded. */
  target: string;
  /** Node's `rawHeaders`: name, value, name, value… */
  rawHeaders: string[];
  body: Buffer;
  sourceIp: string;
  /** E.g. "1.1". */
  httpVersion: string;
}

/** The caller of an AWS_IAM URL, as the SigV4 check identified it. */
export interface FunctionUrlCaller {
  accessKey: string;
  accountId: string;
  /** The caller's unique id, e.g. `AROA…:session` for an assumed role. */
  userId: string;
  /** E.g. arn:aws:sts::000000000000:assumed-role/async-mcp-local-caller/local. */
  userArn: string;
}

export interface FunctionUrlEventOptions {
  /** The URL id: the first label of `<url-id>.lambda-url.<region>.on.aws`. */
  urlId: string;
  /** @default a fresh UUID */
  requestId?: string;
  /** @default the current time */
  now?: Date;
  /** Present under AWS_IAM. */
  caller?: FunctionUrlCaller;
}

/** The Function URL event of payload format 2.0, with the IAM authorizer when there is a caller. */
export type FunctionUrlEvent = Omit<LambdaFunctionURLEvent, 'pathParameters' | 'stageVariables' | 'requestContext'> & {
  pathParameters: null;
  stageVariables: null;
  requestContext: LambdaFunctionURLEvent['requestContext'] & {
    authorizer?: {
      iam: {
        accessKey: string;
        accountId: string;
        callerId: string;
        cognitoIdentity: null;
        principalOrgId: null;
        userArn: string;
        userId: string;
      };
    };
  };
};

/** The 32 lower-case characters of a Function URL id, derived from the function's ARN so it is stable across runs. */
export function functionUrlId(functionArn: string): string {
  return createHash('sha256').update(functionArn).digest('hex').slice(0, 32);
}

/** Builds the event as the Function URL builds it. */
export function functionUrlEvent(request: FunctionUrlRequest, options: FunctionUrlEventOptions): FunctionUrlEvent {
  const now = options.now ?? new Date();
  const headers: Record<string, string> = {};
  let cookieHeader: string | undefined;
  for (let index = 0; index + 1 < request.rawHeaders.length; index += 2) {
    const name = (request.rawHeaders[index] ?? '').toLowerCase();
    const value = request.rawHeaders[index + 1] ?? '';
    if (name === 'cookie') cookieHeader = cookieHeader === undefined ? value : `${cookieHeader}; ${value}`;
    else headers[name] = name in headers ? `${headers[name]},${value}` : value;
  }
  const host = headers.host ?? 'localhost';
  const queryAt = request.target.indexOf('?');
  const rawPath = queryAt < 0 ? request.target : request.target.slice(0, queryAt);
  const rawQueryString = queryAt < 0 ? '' : request.target.slice(queryAt + 1);
  const cookies = cookieHeader
    ?.split(';')
    .map((cookie) => cookie.trim())
    .filter((cookie) => cookie !== '');
  const queryStringParameters = queryParameters(rawQueryString);
  const text = isTextContent(headers['content-type']);
  const caller = options.caller;
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    ...(cookies && cookies.length > 0 ? { cookies } : {}),
    headers,
    ...(queryStringParameters ? { queryStringParameters } : {}),
    requestContext: {
      accountId: caller ? caller.accountId : 'anonymous',
      apiId: options.urlId,
      ...(caller
        ? {
            authorizer: {
              iam: {
                accessKey: caller.accessKey,
                accountId: caller.accountId,
                callerId: caller.userId,
                cognitoIdentity: null,
                principalOrgId: null,
                userArn: caller.userArn,
                userId: caller.userId,
              },
            },
          }
        : {}),
      // The host the client called: locally 127.0.0.1:<port>, where AWS has <url-id>.lambda-url.<region>.on.aws.
      domainName: host,
      domainPrefix: host.split('.', 1)[0]?.split(':', 1)[0] ?? '',
      http: {
        method: request.method.toUpperCase(),
        path: rawPath,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.sourceIp,
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: options.requestId ?? randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: clfTime(now),
      timeEpoch: now.getTime(),
    },
    ...(request.body.length > 0 ? { body: text ? request.body.toString('utf8') : request.body.toString('base64') } : {}),
    pathParameters: null,
    isBase64Encoded: request.body.length > 0 && !text,
    stageVariables: null,
  };
}

/** Decoded parameters, repeated names comma-joined; undefined for an empty query, which AWS leaves out. */
function queryParameters(rawQueryString: string): Record<string, string> | undefined {
  if (rawQueryString === '') return undefined;
  const parameters: Record<string, string> = {};
  for (const [name, value] of new URLSearchParams(rawQueryString)) {
    parameters[name] = name in parameters ? `${parameters[name]},${value}` : value;
  }
  return Object.keys(parameters).length > 0 ? parameters : undefined;
}

const TEXT_TYPES = new Set(['application/json', 'application/javascript', 'application/xml', 'application/x-www-form-urlencoded']);

/** Text bodies reach the function as strings; anything else (no content type included) base64-encoded. */
export function isTextContent(contentType: string | undefined): boolean {
  if (!contentType) return false;
  const type = (contentType.split(';', 1)[0] ?? '').trim().toLowerCase();
  return type.startsWith('text/') || type.endsWith('+json') || type.endsWith('+xml') || TEXT_TYPES.has(type);
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** The request time in Common Log Format, as requestContext.time gives it: 12/Mar/2020:19:03:58 +0000. */
function clfTime(date: Date): string {
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}/${MONTHS[date.getUTCMonth()]}/${date.getUTCFullYear()}:${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
}
