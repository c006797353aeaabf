/**
 * The CORS of a Function URL, from the template's `Cors` property (AWS::Lambda::Url): the URL
 * answers preflight requests itself and adds the CORS headers to the function's responses,
 * replacing any the function set.
 */
import type { IncomingMessage } from 'node:http';

/** `Cors` of AWS::Lambda::Url, as the template writes it. */
export interface FunctionUrlCors {
  AllowCredentials?: boolean;
  AllowHeaders?: string[];
  AllowMethods?: string[];
  AllowOrigins?: string[];
  ExposeHeaders?: string[];
  MaxAge?: number;
}

/** The `Access-Control-Allow-Origin` for this request's Origin, or undefined when the origin is not allowed. */
function allowedOrigin(cors: FunctionUrlCors, origin: string | undefined): string | undefined {
  if (!origin) return undefined;
  const origins = cors.AllowOrigins ?? [];
  if (origins.includes('*')) return cors.AllowCredentials ? origin : '*';
  return origins.some((allowed) => allowed.toLowerCase() === origin.toLowerCase()) ? origin : undefined;
}

function methodAllowed(cors: FunctionUrlCors, method: string): boolean {
  const methods = (cors.AllowMethods ?? []).map((allowed) => allowed.toUpperCase());
  return methods.includes('*') || methods.includes(method.toUpperCase());
}

/**
 * The headers of the URL's answer to a preflight (OPTIONS with Origin and
 * Access-Control-Request-Method), or undefined when the request is not one. A preflight the
 * configuration does not allow gets an answer without CORS headers, which the browser refuses.
 */
export function corsPreflight(cors: FunctionUrlCors, request: IncomingMessage): Record<string, string> | undefined {
  const method = header(request, 'access-control-request-method');
  if (request.method !== 'OPTIONS' || !method || !header(request, 'origin')) return undefined;
  const origin = allowedOrigin(cors, header(request, 'origin'));
  if (!origin || !methodAllowed(cors, method)) return {};
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': (cors.AllowMethods ?? []).join(','),
    ...(cors.AllowHeaders?.length ? { 'access-control-allow-headers': cors.AllowHeaders.join(',') } : {}),
    ...(cors.MaxAge !== undefined ? { 'access-control-max-age': String(cors.MaxAge) } : {}),
    ...(cors.AllowCredentials ? { 'access-control-allow-credentials': 'true' } : {}),
    vary: 'Origin',
  };
}

/** The CORS headers the URL adds to a response to an allowed origin. */
export function corsResponseHeaders(cors: FunctionUrlCors, request: IncomingMessage): Record<string, string> {
  const origin = allowedOrigin(cors, header(request, 'origin'));
  if (!origin) return {};
  return {
    'access-control-allow-origin': origin,
    ...(cors.ExposeHeaders?.length ? { 'access-control-expose-headers': cors.ExposeHeaders.join(',') } : {}),
    ...(cors.AllowCredentials ? { 'access-control-allow-credentials': 'true' } : {}),
    vary: 'Origin',
  };
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}
