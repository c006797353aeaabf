/**
 * Where each tool's state machine lives once deployed, without a per-tool list in the
 * Lambda environment (which is limited to 4 KB, a few dozen tools): the stack names its
 * state machines deterministically, `<prefix><tool>`, and gives the MCP Lambda one ARN
 * prefix; an existing machine's ARN is in its `tool.json`, which the Lambda's asset carries.
 */
import { createHash } from 'node:crypto';
import type { ToolFolder } from './tool-folder.ts';

/** Environment variable: `arn:<partition>:states:<region>:<account>:stateMachine:<name prefix>`. */
export const STATE_MACHINE_ARN_PREFIX_ENV = 'TOOL_STATE_MACHINE_ARN_PREFIX';

/** Step Functions' limit on a state machine name. */
export const MAX_STATE_MACHINE_NAME = 80;
/** Room the prefix leaves for the tool's part of the name. */
export const MAX_NAME_PREFIX = 40;

/**
 * The deployed state machine's name: `<prefix><tool>`, or, when that is too long, the tool
 * name cut short plus a hash of it, so two long names never collide.
 */
export function toolStateMachineName(prefix: string, tool: string): string {
  if (prefix.length > MAX_NAME_PREFIX) throw new Error(`a state machine name prefix is at most ${MAX_NAME_PREFIX} characters, got "${prefix}"`);
  const name = `${prefix}${tool}`;
  if (name.length <= MAX_STATE_MACHINE_NAME) return name;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, 8);
  return `${prefix}${tool.slice(0, MAX_STATE_MACHINE_NAME - prefix.length - hash.length - 1)}-${hash}`;
}

/**
 * Resolves each tool to its deployed state machine ARN from the one ARN prefix the stack
 * sets (`STATE_MACHINE_ARN_PREFIX_ENV`); an existing machine keeps its own ARN.
 */
export function deployedStateMachineArns(arnPrefix: string): (tool: string, folder: ToolFolder) => string {
  const arnOf = toolStateMachineArns(arnPrefix);
  return (tool, folder) => folder.config.stateMachineArn ?? arnOf(tool);
}

/** Each tool's deployed state machine ARN under the stack's one ARN prefix (`STATE_MACHINE_ARN_PREFIX_ENV`). */
export function toolStateMachineArns(arnPrefix: string): (tool: string) => string {
  const match = /^(arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:)([^:]*)$/.exec(arnPrefix);
  if (!match)
    throw new Error(`${STATE_MACHINE_ARN_PREFIX_ENV} must be "arn:<partition>:states:<region>:<account>:stateMachine:<name prefix>", got "${arnPrefix}"`);
  const [, arnBase = '', namePrefix = ''] = match;
  return (tool) => `${arnBase}${toolStateMachineName(namePrefix, tool)}`;
}
