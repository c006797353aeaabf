/**
 * Lambda Function URL (payload format 2.0) event → web `Request`, and web
 * `Response` → Function URL result. Translation only: the handler in between is
 * the same fetch-style function the local server runs.
 */
import type { APIGatewayProxyStructuredResultV2, LambdaFunctionURLEvent } from 'aws-lambda';

/** Builds the `Request` a Function URL event describes. */
export function toWebRequest(event: LambdaFunctionURLEvent): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(event.headers ?? {})) {
    // Function URLs already join repeated headers with commas.
    if (value !== undefined) headers.set(name, value);
  }
  // Format 2.0 moves cookies out of the headers into their own array.
  if (event.cookies && event.cookies.length > 0) {
    const existing = headers.get('cookie');
    headers.set('cookie', [...(existing ? [existing] : []), ...event.cookies].join('; '));
  }
  const host = event.requestContext.domainName || headers.get('host') || 'localhost';
  const protocol = headers.get('x-forwarded-proto') ?? 'https';
  const query = event.rawQueryString ? `?${event.rawQueryString}` : '';
  const method = event.requestContext.http.method.toUpperCase();
  const init: RequestInit = { method, headers };
  // A GET or HEAD with a body is a TypeError for `Request`.
  if (event.body !== undefined && event.body !== null && method !== 'GET' && method !== 'HEAD') {
    init.body = event.isBase64Encoded ? Buffer.from(event.body, 'base64') : event.body;
  }
  return new Request(`${protocol}://${host}${event.rawPath || '/'}${query}`, init);
}

/**
 * Turns a `Response` into the Function URL result: `set-cookie` headers become
 * `cookies`, text bodies stay text and anything else is base64.
 */
export async function toFunctionUrlResult(response: Response): Promise<APIGatewayProxyStructuredResultV2> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'set-cookie') headers[name] = value;
  });
  const bytes = new Uint8Array(await response.arrayBuffer());
  const text = bytes.length === 0 ? '' : asText(bytes, response.headers);
  const result: APIGatewayProxyStructuredResultV2 = {
    statusCode: response.status,
    headers,
    body: text ?? Buffer.from(bytes).toString('base64'),
    isBase64Encoded: text === undefined,
  };
  const cookies = response.headers.getSetCookie();
  if (cookies.length > 0) result.cookies = cookies;
  return result;
}

const TEXT_TYPE = /^(text\/|application\/([\w.+-]*\+)?(json|xml|javascript|x-www-form-urlencoded)$|image\/svg\+xml$)/;

/** The body as text when it is text in UTF-8; `undefined` when it must travel as base64. */
function asText(bytes: Uint8Array, headers: Headers): string | undefined {
  const encoding = headers.get('content-encoding');
  if (encoding && encoding.toLowerCase() !== 'identity') return undefined;
  const contentType = headers.get('content-type');
  if (contentType) {
    const [type = '', ...params] = contentType.toLowerCase().split(';').map((part) => part.trim());
    const charset = params.find((param) => param.startsWith('charset='))?.slice('charset='.length).replace(/"/g, '');
    if (!TEXT_TYPE.test(type) || (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8')) return undefined;
  }
  try {
    // Fatal: bytes that are not UTF-8 (or an untyped binary body) go as base64 instead of being mangled.
    return new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}
