/**
 * A result too large for a durable execution to return (256 KB), stored in the results bucket
 * and returned as a `resource_link` the client reads with `resources/read`, as a worker's is
 * (lambdas/results/write-result.ts). The write is a step: a replay returns the same link.
 */
import type { DurableContext } from '@aws/durable-execution-sdk-js';
import { writeResult, type ResourceLinkResult, type WriteResultOptions } from '../results/write-result.ts';
import { operationKeyOf, type ToolEvent } from './tool-event.ts';

export type { ResourceLinkResult, WriteResultOptions as LinkResultOptions } from '../results/write-result.ts';

/**
 * Stores `body` as the caller's result (only they can read it, while the operation lives) and
 * returns the CallToolResult linking to it, for the handler to return. A synchronous call has
 * no operation to keep the result with: it is refused.
 */
export async function linkResult(
  context: DurableContext,
  event: ToolEvent<unknown>,
  body: string | Uint8Array,
  options: WriteResultOptions & { stepName?: string },
): Promise<ResourceLinkResult> {
  const owner = operationKeyOf(event);
  if (!owner) throw new Error('linkResult needs the operation the result belongs to; a synchronous call has none (make the tool async)');
  const { stepName = 'link-result', ...link } = options;
  return context.step(stepName, () => writeResult(owner, body, link));
}
