/**
 * `resources/read` for stored results (the `resource_link`s of large tool results). Only
 * the owning principal can read one, and only while its operation lives: anything else
 * reads as "Resource not found", the same answer an unknown URI gets, so nobody learns
 * that another principal's result exists. The code is -32602 with `data: { uri }`: the
 * 2026-07-28 spec requires it, and the SDK sends it in every era (older revisions
 * suggested -32002, which clients still accept).
 */
import { ResourceNotFoundError, type Server, type ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod';
import type { McpDeps } from '../dialects/dialect.ts';
import { ANY_RESULT } from '../dialects/dialect-support.ts';
import { toProtocolError } from '../edge/json-rpc-errors.ts';

/** The capability this module serves: reads only, nothing to list or subscribe to. */
export const RESOURCES_CAPABILITY = { resources: {} } as const;

/** Media types whose bytes go out as `text`; anything else goes out as a base64 `blob`. */
const TEXT_TYPE = /^(text\/|application\/(json|xml|csv)\b)/;

// Explicit param schemas: a malformed request is the client's mistake (-32602 naming the
// field), where the SDK's own schema would answer -32603 with its issue list.
const LIST_SCHEMAS = {
  params: z.looseObject({ cursor: z.string({ message: 'cursor must be a string' }).optional() }).optional(),
  result: ANY_RESULT,
};
const READ_SCHEMAS = { params: z.looseObject({ uri: z.string({ message: 'uri must be a string' }) }), result: ANY_RESULT };

/** Resources served beside stored results: the operation card's view (see apps/card-resource.ts). */
export interface ExtraResources {
  /** What `resources/list` shows this request. */
  list(params: Record<string, unknown> | undefined, ctx: ServerContext): Array<Record<string, unknown>>;
  /** The contents of `uri`, or `undefined` when it is none of these. */
  read(uri: string): Promise<{ contents: Array<Record<string, unknown>> } | undefined>;
}

/** Registers `resources/read` (and `resources/list`, empty but for `extra`'s) for `ownerId` on `server`. */
export function registerResultResources(server: Server, deps: McpDeps, ownerId: string, extra?: ExtraResources): void {
  // Results are found through their links, never browsed.
  server.setRequestHandler('resources/list', LIST_SCHEMAS, async (params, ctx) => ({ resources: extra?.list(params, ctx) ?? [] }));
  server.setRequestHandler('resources/read', READ_SCHEMAS, async (params) => {
    const { uri } = params;
    let served: Awaited<ReturnType<ExtraResources['read']>>;
    try {
      served = await extra?.read(uri);
    } catch (error) {
      throw toProtocolError(error, undefined, deps.logger);
    }
    if (served) return served;
    let stored: Awaited<ReturnType<McpDeps['operations']['readResult']>>;
    try {
      stored = await deps.operations.readResult(ownerId, uri);
    } catch (error) {
      throw toProtocolError(error, undefined, deps.logger);
    }
    if (!stored) throw new ResourceNotFoundError(uri, 'Resource not found');
    const { body, contentType } = stored;
    const content = TEXT_TYPE.test(contentType)
      ? { uri, mimeType: contentType, text: Buffer.from(body).toString('utf8') }
      : { uri, mimeType: contentType, blob: Buffer.from(body).toString('base64') };
    return { contents: [content] };
  });
}
