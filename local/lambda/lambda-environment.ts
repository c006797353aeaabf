/**
 * The whole environment of a Lambda sandbox, as the runtime composes it.
 */
import { dirname } from 'node:path';
import type { DeployedFunction } from '../assembly/deployed-stack.ts';

/**
 * The sandbox's whole environment: the template's variables, then what the runtime sets (which a
 * template cannot override: they are reserved), then credentials and endpoints. Nothing of this
 * process's own environment.
 */
export function lambdaEnvironment(
  fn: DeployedFunction,
  runtimeEnvironment: Record<string, string>,
  logGroupName: string,
  logStreamName: string,
): Record<string, string> {
  const region = fn.arn.split(':')[3] || 'us-east-1';
  return {
    ...fn.environment,
    // /var/lang/bin in Lambda: where `node` is.
    PATH: `${dirname(process.execPath)}:/usr/local/bin:/usr/bin/:/bin:/opt/bin`,
    LANG: 'en_US.UTF-8',
    TZ: ':UTC',
    _HANDLER: fn.handler,
    AWS_EXECUTION_ENV: `AWS_Lambda_${fn.runtime}`,
    AWS_REGION: region,
    AWS_DEFAULT_REGION: region,
    AWS_LAMBDA_FUNCTION_NAME: fn.name,
    AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memorySize),
    AWS_LAMBDA_LOG_GROUP_NAME: logGroupName,
    AWS_LAMBDA_LOG_STREAM_NAME: logStreamName,
    AWS_LAMBDA_INITIALIZATION_TYPE: 'on-demand',
    LAMBDA_TASK_ROOT: fn.assetDir,
    ...runtimeEnvironment,
  };
}
