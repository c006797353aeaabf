/**
 * `tool.json` (DESIGN §3), validated with zod: strict, so a misspelt key is an error
 * instead of a silently ignored setting.
 */
import * as z from 'zod';
import { headerDeclarationsOf } from './header-declarations.ts';
import { PermissionsSchema } from './tool-permissions.ts';

export const TOOL_FILE = 'tool.json';
export const DEFINITION_FILE = 'definition.asl.json';
/**
 * A tool written as a Lambda durable function: a module whose `handler` is made by `defineTool`
 * (which holds what tool.json would), or built with `withDurableExecution` beside a tool.json.
 */
export const DURABLE_FILE = 'durable.ts';

const JsonSchemaObject = z
  .looseObject({ type: z.literal('object', { message: 'the root of a tool schema must have "type": "object"' }) })
  .describe('JSON Schema');

const seconds = z.number().int().positive();
const between = (min: number, max: number) => z.number().int().min(min).max(max);

/** Settings of a durable function tool (`durable.ts`), within what Lambda allows for each. */
const DurableSettingsSchema = z.strictObject({
  /** The durable execution's own timeout: up to 366 days. */
  executionTimeoutSeconds: between(1, 31_622_400).optional(),
  /** How long Lambda keeps a finished execution's history. */
  retentionDays: between(1, 90).optional(),
  memorySize: between(128, 10_240).optional(),
  /** The function's timeout, for one invocation; an execution goes on across invocations, replaying its checkpoints. */
  invocationTimeoutSeconds: between(1, 900).optional(),
});

/** MCP ToolAnnotations: hints only, which clients must not trust from an untrusted server. */
const ToolAnnotationsSchema = z.strictObject({
  title: z.string().min(1).optional(),
  readOnlyHint: z.boolean().optional(),
  destructiveHint: z.boolean().optional(),
  idempotentHint: z.boolean().optional(),
  openWorldHint: z.boolean().optional(),
});

/** MCP Icon: `src` is an https: or data: URI. */
const IconSchema = z.strictObject({
  src: z.string().regex(/^(https:|data:)/, 'an icon src is an https: or data: URI'),
  mimeType: z.string().min(1).optional(),
  sizes: z.array(z.string().regex(/^(\d+x\d+|any)$/, 'an icon size is WxH (e.g. 48x48) or "any"')).optional(),
  theme: z.enum(['light', 'dark']).optional(),
});

/** A state machine ARN of any partition; the name part is what Step Functions allows. */
export const STATE_MACHINE_ARN = /^arn:aws[a-z-]*:states:[a-z0-9-]+:\d{12}:stateMachine:[^\s:/<>{}[\]?*"#%\\^|~`$&,;]{1,80}$/;

export const ToolConfigSchema = z.strictObject({
  $schema: z.string().optional(),
  name: z.string().regex(/^[A-Za-z0-9_.-]{1,128}$/, 'a tool name is 1-128 characters of A-Z, a-z, 0-9, _ . -'),
  title: z.string().min(1).optional(),
  description: z.string().min(1),
  inputSchema: JsonSchemaObject,
  outputSchema: JsonSchemaObject.optional(),
  invocation: z.enum(['sync', 'async', 'both']),
  workflowType: z.enum(['STANDARD', 'EXPRESS']).default('STANDARD'),
  keepAliveSeconds: seconds.optional(),
  maxKeepAliveSeconds: seconds.nullable().optional(),
  pollIntervalSeconds: seconds.optional(),
  syncTimeoutSeconds: seconds.max(900).optional(),
  /**
   * For a task-capable client: how long its call waits for the execution's first questions,
   * asked and answered in the call's own rounds (MRTR) before the task is returned. 0 returns
   * the task at once, and questions are then answered through the task.
   */
  askBeforeTaskSeconds: z.number().int().min(0).max(900).optional(),
  /** IAM statements for this tool's state machine role (its AWS service integrations). */
  permissions: PermissionsSchema.optional(),
  /** An existing state machine to run instead of deploying `definition.asl.json`. */
  stateMachineArn: z
    .string()
    .regex(STATE_MACHINE_ARN, 'stateMachineArn must be a state machine ARN (arn:aws:states:<region>:<account>:stateMachine:<name>)')
    .optional(),
  /**
   * What an existing machine receives: our `{ arguments, operation }` envelope, or the
   * arguments alone (its own input contract). Only with `stateMachineArn`.
   */
  input: z.enum(['envelope', 'arguments']).optional(),
  /** The durable function's settings; only in a folder with `durable.ts`. */
  durable: DurableSettingsSchema.optional(),
  /** Listed with the tool in `tools/list`. */
  annotations: ToolAnnotationsSchema.optional(),
  icons: z.array(IconSchema).optional(),
  _meta: z.record(z.string(), z.unknown()).optional(),
});
export type ToolConfig = z.infer<typeof ToolConfigSchema>;

/** Which file a tool folder runs: a state machine definition or a durable function. */
export type ToolKind = 'state machine' | 'durable';

/** Problems between fields that each are valid on their own, for a folder of the given kind. */
export function crossFieldProblems(config: ToolConfig, kind: ToolKind = 'state machine'): string[] {
  const problems: string[] = kind === 'durable' ? durableToolProblems(config) : [];
  if (config.workflowType === 'EXPRESS' && config.invocation !== 'sync' && kind !== 'durable') {
    // Express executions cannot be described or kept for later retrieval.
    problems.push(`workflowType EXPRESS is only for sync tools; use STANDARD for invocation "${config.invocation}"`);
  }
  const { keepAliveSeconds, maxKeepAliveSeconds } = config;
  if (keepAliveSeconds && maxKeepAliveSeconds && keepAliveSeconds > maxKeepAliveSeconds) {
    problems.push(`keepAliveSeconds (${keepAliveSeconds}) exceeds maxKeepAliveSeconds (${maxKeepAliveSeconds})`);
  }
  const headers = headerDeclarationsOf(config.inputSchema);
  if (!headers.ok) problems.push(`inputSchema: ${headers.problem}`);
  if (kind === 'durable') return problems;
  if (config.durable !== undefined)
    problems.push(`durable applies only to a durable function tool (${DURABLE_FILE} in place of ${DEFINITION_FILE}); remove durable`);
  if (config.stateMachineArn === undefined) {
    if (config.input !== undefined) problems.push('input applies only to an existing state machine: add stateMachineArn or remove input');
  } else if (config.permissions !== undefined) {
    problems.push('permissions apply to the state machine role the stack creates; an existing state machine (stateMachineArn) keeps its own role');
  }
  return problems;
}

/** The Step Functions settings a durable function tool cannot have. */
function durableToolProblems(config: ToolConfig): string[] {
  const problems: string[] = [];
  const why = `a durable function tool (${DURABLE_FILE}) runs no state machine`;
  if (config.stateMachineArn !== undefined) problems.push(`stateMachineArn does not apply: ${why}; remove stateMachineArn or ${DURABLE_FILE}`);
  if (config.input !== undefined) problems.push(`input does not apply: ${why}, and its event is always { arguments, operation }; remove input`);
  // A durable execution is described and kept for later like a STANDARD one; Express is Step Functions' alone.
  if (config.workflowType === 'EXPRESS') problems.push(`workflowType EXPRESS does not apply: ${why}; remove workflowType (durable tools are STANDARD)`);
  return problems;
}

/** The name an existing machine has in its ARN. */
export function stateMachineNameOf(arn: string): string {
  return arn.slice(arn.lastIndexOf(':') + 1);
}
