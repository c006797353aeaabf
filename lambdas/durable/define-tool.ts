/**
 * A durable tool defined once, in its `durable.ts`: tool.json's settings with zod (or any
 * Standard Schema that derives JSON Schema) for its input and output, and the handler they
 * type. The loader reads the definition from the handler; the listed JSON Schema is derived
 * from the schemas at load (and synth) time, never at the function's own init.
 */
import { type DurableContext, type DurableLambdaHandler, withDurableExecution } from '@aws/durable-execution-sdk-js';
import { type AskClientOptions, askClient, type ClientRequest } from './ask-client.ts';
import { type LinkResultOptions, linkResult, type ResourceLinkResult } from './link-result.ts';
import { type LogReport, type ProgressReport, type ReportOptions, reportLog, reportProgress } from './report-progress.ts';
import { type Caller, callerOf, type ToolEvent, type ToolResult } from './tool-event.ts';

/**
 * A schema a tool's input or output can be given in: a Standard Schema that validates
 * (`~standard.validate`) and derives its JSON Schema (`~standard.jsonSchema`), as zod 4 does.
 */
export interface ToolSchema<Input = unknown, Output = Input> {
  readonly '~standard': {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: { readonly input: Input; readonly output: Output } | undefined;
    readonly validate: (value: unknown) => StandardResult<Output> | Promise<StandardResult<Output>>;
    readonly jsonSchema?: {
      readonly input: (options: { target: string }) => Record<string, unknown>;
      readonly output: (options: { target: string }) => Record<string, unknown>;
    };
  };
}

type StandardResult<Output> =
  | { value: Output; issues?: undefined }
  | { issues: ReadonlyArray<{ message: string; path?: ReadonlyArray<PropertyKey | { key: PropertyKey }> }> };

/** What a schema accepts. */
export type InputOf<Schema extends ToolSchema> = NonNullable<Schema['~standard']['types']>['input'];
/** What a schema gives once it parsed. */
export type OutputOf<Schema extends ToolSchema> = NonNullable<Schema['~standard']['types']>['output'];

/** tool.json's settings, but for the two schemas (and what only a state machine has). */
export interface ToolSettings {
  name: string;
  title?: string;
  description: string;
  invocation: 'sync' | 'async' | 'both';
  keepAliveSeconds?: number;
  maxKeepAliveSeconds?: number | null;
  pollIntervalSeconds?: number;
  syncTimeoutSeconds?: number;
  askBeforeTaskSeconds?: number;
  /** The durable function's own settings: its execution timeout, retention, memory, invocation timeout. */
  durable?: { executionTimeoutSeconds?: number; retentionDays?: number; memorySize?: number; invocationTimeoutSeconds?: number };
  annotations?: { title?: string; readOnlyHint?: boolean; destructiveHint?: boolean; idempotentHint?: boolean; openWorldHint?: boolean };
  icons?: Array<{ src: string; mimeType?: string; sizes?: string[]; theme?: 'light' | 'dark' }>;
  _meta?: Record<string, unknown>;
}

/** The options of {@link defineTool}: the tool's settings, and its schemas. */
export interface ToolDefinition<In extends ToolSchema = ToolSchema, Out extends ToolSchema | undefined = ToolSchema | undefined> extends ToolSettings {
  /** The arguments: listed as JSON Schema of what a client sends, and parsed before the handler sees them. */
  inputSchema: In;
  /** The structured result: listed as JSON Schema of what the client receives, and checked (and parsed) when the handler returns. */
  outputSchema?: Out;
}

/** The structured content a handler returns: what `outputSchema` accepts, or any object without one. */
export type StructuredOf<Out extends ToolSchema | undefined> = Out extends ToolSchema ? InputOf<Out> : Record<string, unknown>;

/** What a handler may return: the structured content alone, or a whole CallToolResult carrying it. */
export type DefinedToolReturn<Out extends ToolSchema | undefined> = StructuredOf<Out> | ToolResult<StructuredOf<Out>>;

/**
 * The handler's second argument: the durable context (steps, waits, callbacks), with the
 * helpers bound to this execution and its event.
 */
export interface ToolContext<Args = unknown> extends DurableContext {
  /** The execution input: the arguments as the client sent them, and the operation. */
  readonly event: ToolEvent<Args>;
  /** Who called: owner id, operation token (null for a synchronous call), client capabilities. */
  readonly caller: Caller;
  /** Asks the client (elicitation, sampling, roots) and waits, suspended, for the answer (see `askClient`). */
  askClient<Answer = unknown>(request: ClientRequest, options?: AskClientOptions): Promise<Answer>;
  /** Reports progress to the client (see `reportProgress`). */
  reportProgress(report: ProgressReport, options?: ReportOptions): Promise<void>;
  /** Sends the client a log line (see `reportLog`). */
  reportLog(report: LogReport, options?: ReportOptions): Promise<void>;
  /** Stores a result too large to return and gives the result linking to it (see `linkResult`). */
  linkResult(body: string | Uint8Array, options: LinkResultOptions & { stepName?: string }): Promise<ResourceLinkResult>;
}

/** A durable tool's `handler`, which also carries the definition the loader reads. */
export type DefinedTool = DurableLambdaHandler & { readonly definition: ToolDefinition };

/**
 * Defines a durable tool: `export const handler = defineTool({ name, description, inputSchema,
 * outputSchema, invocation }, async (args, context) => ({ ... }))`. `args` is the parsed
 * input; the return is the structured content `outputSchema` describes, or a whole
 * CallToolResult. A return that does not match `outputSchema` is left as it is, so the server
 * refuses it naming the field, as it refuses a state machine's.
 */
export function defineTool<In extends ToolSchema, Out extends ToolSchema | undefined = undefined>(
  definition: ToolDefinition<In, Out>,
  handler: (args: OutputOf<In>, context: ToolContext<InputOf<In>>) => Promise<DefinedToolReturn<Out>> | DefinedToolReturn<Out>,
): DefinedTool {
  const durable = withDurableExecution(async (event: ToolEvent<InputOf<In>>, context: DurableContext) => {
    const args = await parsed(definition.inputSchema, event.arguments);
    // The server checked the arguments against the listed JSON Schema; what only the schema
    // itself knows (a refinement) fails the run, naming the field, before the tool does anything.
    if (!args.ok) throw new TypeError(`Tool ${definition.name} arguments: ${args.problem}`);
    const result = await handler(args.value as OutputOf<In>, toolContext(context, event));
    return definition.outputSchema ? await checkedOutput(definition.outputSchema, result) : result;
  });
  return Object.assign(durable, { definition: definition as ToolDefinition });
}

/** Whether `handler` was made by {@link defineTool}, so its folder needs no tool.json. */
export function isDefinedTool(handler: unknown): handler is DefinedTool {
  const definition = (handler as { definition?: unknown } | undefined)?.definition;
  return typeof handler === 'function' && typeof definition === 'object' && definition !== null && 'inputSchema' in definition;
}

type Parsed = { ok: true; value: unknown } | { ok: false; problem: string };

async function parsed(schema: ToolSchema, value: unknown): Promise<Parsed> {
  const result = await schema['~standard'].validate(value);
  if (result.issues === undefined) return { ok: true, value: result.value };
  return { ok: false, problem: result.issues.map((issue) => `${pathOf(issue.path)}: ${issue.message}`).join('; ') };
}

function pathOf(path: ReadonlyArray<PropertyKey | { key: PropertyKey }> | undefined): string {
  if (!path || path.length === 0) return '(root)';
  return path.map((segment) => String(typeof segment === 'object' ? segment.key : segment)).join('.');
}

/**
 * The result with its structured content parsed (transforms and defaults applied). One the
 * schema refuses goes out as returned: the server checks every tool's output against the
 * listed outputSchema and answers a mismatch as an internal error naming the field.
 */
async function checkedOutput(schema: ToolSchema, result: unknown): Promise<unknown> {
  if (typeof result !== 'object' || result === null) return result;
  const whole = Array.isArray((result as { content?: unknown }).content);
  if (whole && (result as ToolResult).isError === true) return result;
  const structured = whole ? (result as ToolResult).structuredContent : result;
  const check = await parsed(schema, structured);
  if (!check.ok) return result;
  return whole ? { ...result, structuredContent: check.value } : check.value;
}

function toolContext<Args>(context: DurableContext, event: ToolEvent<Args>): ToolContext<Args> {
  const helpers: Omit<ToolContext<Args>, keyof DurableContext> = {
    event,
    caller: callerOf(event),
    askClient: (request, options) => askClient(context, event, request, options),
    reportProgress: (report, options) => reportProgress(context, event, report, options),
    reportLog: (report, options) => reportLog(context, event, report, options),
    linkResult: (body, options) => linkResult(context, event, body, options),
  };
  // A proxy, not a copy: the SDK's context keeps its state on itself, so its methods run bound to it.
  return new Proxy(context, {
    get(target, property) {
      if (Object.hasOwn(helpers, property)) return helpers[property as keyof typeof helpers];
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    has: (target, property) => Object.hasOwn(helpers, property) || Reflect.has(target, property),
  }) as ToolContext<Args>;
}
