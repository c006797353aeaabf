/**
 * The fetch-style MCP endpoint shared by the Lambda and the local server: one
 * `(Request, principal) => Response` function, so local runs exercise the deployed
 * code path. It serves 2026-07-28 and initialize-based clients from one URL.
 */
import {
  createMcpHandler,
  hostHeaderValidationResponse,
  originValidationResponse,
  type AuthInfo,
} from '@modelcontextprotocol/server';
import { ownerIdFor } from '../operations/fingerprint.ts';
import { customHeaderRefusal } from './custom-headers.ts';
import { createServerFactory, type ServerFactoryOptions } from './mcp-server-factory.ts';
import { guardRequestBody, MAX_BODY_BYTES } from './request-body-guard.ts';
import { withRequestScope } from './request-scope.ts';

export { MAX_BODY_BYTES };

export interface HttpHandlerOptions extends ServerFactoryOptions {
  /**
   * Hostnames accepted in Host and Origin (DNS-rebinding protection for local
   * servers). Absent in AWS, where the Function URL fixes the host.
   */
  allowedHostnames?: string[];
}

export type McpFetch = (request: Request, principal: string) => Promise<Response>;

export function createHttpHandler(options: HttpHandlerOptions): McpFetch {
  const factory = createServerFactory(options);
  const handler = createMcpHandler(
    (ctx) => factory(ctx.era, (ctx.authInfo?.extra?.ownerId as string | undefined) ?? ownerIdFor('anonymous')),
    {
      legacy: 'stateless',
      maxRequestBodySize: MAX_BODY_BYTES,
      onerror: (error) => {
        // Requests the SDK rejected (bad JSON-RPC, header mismatches) are the client's mistake, already answered.
        const rejected = error.message.startsWith('Rejected inbound request');
        (rejected ? options.deps.logger.warn : options.deps.logger.error)(rejected ? 'request rejected' : 'transport error', {
          error: `${error.name}: ${error.message}`,
        });
      },
    },
  );
  return async (request, principal) => {
    if (options.allowedHostnames) {
      const rejected =
        hostHeaderValidationResponse(request, options.allowedHostnames) ??
        originValidationResponse(request, options.allowedHostnames);
      if (rejected) return rejected;
    }
    // Size, nesting depth, batches and id lengths are checked before the SDK parses anything.
    const guarded = await guardRequestBody(request);
    if (!guarded.ok) return guarded.response;
    const headerRefusal = customHeaderRefusal(guarded.request, guarded.parsedBody, options.deps.catalog);
    if (headerRefusal) {
      // The client's mistake, answered; the header values are tool arguments and stay out of logs.
      options.deps.logger.warn('request rejected', { error: 'Mcp-Param header does not match the arguments' });
      return headerRefusal;
    }
    const authInfo: AuthInfo = { token: '', clientId: principal, scopes: [], extra: { ownerId: ownerIdFor(principal) } };
    const fetchOptions = { authInfo, ...(guarded.parsedBody === undefined ? {} : { parsedBody: guarded.parsedBody }) };
    return withRequestScope(() => handler.fetch(guarded.request, fetchOptions), { batch: guarded.batch });
  };
}
