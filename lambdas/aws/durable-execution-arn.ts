/**
 * The ARN the core records for a durable execution before its start answers. A durable
 * execution's ARN ends in an id Lambda assigns at start
 * (`…:function:f:$LATEST/durable-execution/<name>/<id>`), so no name derives it; this one ends
 * in `by-name`, which no assigned id (a UUID) equals, and the durable engine resolves it by name
 * when it describes or stops. Apart from the engine, so deriving it loads no Lambda client.
 */
export const BY_NAME_SUFFIX = '/by-name';

export function durableExecutionArnFor(functionArn: string, name: string): string {
  return `${functionArn}/durable-execution/${name}${BY_NAME_SUFFIX}`;
}
