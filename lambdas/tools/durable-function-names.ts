/**
 * Where each durable function tool lives once deployed, found as state machine tools are
 * (state-machine-names.ts): the stack names each tool's function `<prefix><tool>` and gives
 * the MCP Lambda one ARN prefix, so no per-tool list goes into its 4 KB environment.
 */
import { createHash } from 'node:crypto';
import { toolStateMachineArns } from './state-machine-names.ts';
import type { ToolFolder } from './tool-folder.ts';

/** Environment variable: `arn:<partition>:lambda:<region>:<account>:function:<name prefix>`. */
export const DURABLE_FUNCTION_ARN_PREFIX_ENV = 'TOOL_DURABLE_FUNCTION_ARN_PREFIX';

/**
 * The alias the engine invokes: a replay must run the code its execution started with, and a
 * qualified invoke pins each execution to one published version; the alias moves on deploy.
 */
export const DURABLE_FUNCTION_ALIAS = 'live';

/** Lambda's limit on a function name. */
export const MAX_FUNCTION_NAME = 64;
/** Room the prefix leaves for the tool's part of the name. */
export const MAX_FUNCTION_NAME_PREFIX = 32;

/** What Lambda allows in a function name; a tool name may also hold dots. */
const FUNCTION_NAME_PART = /^[A-Za-z0-9_-]*$/;
const HASH_LENGTH = 8;

/**
 * The deployed function's name: `<prefix><tool>`, or, when that is too long or the tool's
 * name has a character Lambda refuses (a dot), the tool name cut short and made safe plus a
 * hash of it, so two tools never share a function.
 */
export function toolFunctionName(prefix: string, tool: string): string {
  if (prefix.length > MAX_FUNCTION_NAME_PREFIX) throw new Error(`a function name prefix is at most ${MAX_FUNCTION_NAME_PREFIX} characters, got "${prefix}"`);
  if (!FUNCTION_NAME_PART.test(prefix)) throw new Error(`a function name prefix is made of A-Z, a-z, 0-9, _ and -, got "${prefix}"`);
  const name = `${prefix}${tool}`;
  if (name.length <= MAX_FUNCTION_NAME && FUNCTION_NAME_PART.test(tool)) return name;
  const hash = createHash('sha256').update(tool).digest('hex').slice(0, HASH_LENGTH);
  const safe = tool.replaceAll(/[^A-Za-z0-9_-]/g, '_');
  return `${prefix}${safe.slice(0, MAX_FUNCTION_NAME - prefix.length - HASH_LENGTH - 1)}-${hash}`;
}

/** Each durable tool's alias ARN (`…:function:<name>:live`) under the stack's one ARN prefix (`DURABLE_FUNCTION_ARN_PREFIX_ENV`). */
export function toolDurableFunctionArns(arnPrefix: string): (tool: string) => string {
  const match = /^(arn:aws[a-z-]*:lambda:[a-z0-9-]+:\d{12}:function:)([A-Za-z0-9_-]*)$/.exec(arnPrefix);
  if (!match)
    throw new Error(`${DURABLE_FUNCTION_ARN_PREFIX_ENV} must be "arn:<partition>:lambda:<region>:<account>:function:<name prefix>", got "${arnPrefix}"`);
  const [, arnBase = '', namePrefix = ''] = match;
  return (tool) => `${arnBase}${toolFunctionName(namePrefix, tool)}:${DURABLE_FUNCTION_ALIAS}`;
}

/**
 * Resolves each deployed tool to what runs it: a durable tool's function alias, an existing
 * machine's own ARN, or the stack's state machine. A stack without durable tools may leave
 * `durableArnPrefix` unset; a durable tool then fails the lookup naming the variable.
 */
export function deployedToolArns(stateMachineArnPrefix: string, durableArnPrefix: string | undefined): (tool: string, folder: ToolFolder) => string {
  const stateMachineArnOf = toolStateMachineArns(stateMachineArnPrefix);
  const durableArnOf = durableArnPrefix === undefined ? undefined : toolDurableFunctionArns(durableArnPrefix);
  return (tool, folder) => {
    if (!folder.durable) return folder.config.stateMachineArn ?? stateMachineArnOf(tool);
    if (!durableArnOf) throw new Error(`${DURABLE_FUNCTION_ARN_PREFIX_ENV} is not set, and tool "${tool}" is a durable function`);
    return durableArnOf(tool);
  };
}
