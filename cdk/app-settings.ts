/**
 * The app's settings, from CDK context (`cdk deploy -c key=value` or cdk.json), so a
 * deployment can point at another tools directory or choose who may call without code changes.
 */
import { isAbsolute, resolve } from 'node:path';
import { Duration } from 'aws-cdk-lib';
import type { Node } from 'constructs';
import * as z from 'zod';
import type { EventsOptions } from './events-delivery.ts';
import type { McpAuth } from './mcp-auth.ts';
import type { ServerTracing } from './server-tracing.ts';
import { OPERATION_CARD_CONTEXT, operationCardFromContext } from './operation-card-asset.ts';
import { DEFAULT_TOOLS_DIR } from './repo-paths.ts';

export const CONTEXT_KEYS = {
  /** Stack name. */
  stackName: 'stackName',
  /** Tools directory, relative to the working directory. */
  toolsDir: 'toolsDir',
  /** Worker modules directory, relative to the working directory. */
  workersDir: 'workersDir',
  /** `iam` (default), `oauth` (implied by `oauthIssuer`) or `none`. */
  auth: 'auth',
  /** Deprecated spelling: `AWS_IAM` is `auth=iam`, `NONE` is `auth=none`. */
  functionUrlAuthType: 'functionUrlAuthType',
  /** With `auth=iam`: `role` (default) or `session`. */
  principalScope: 'principalScope',
  /** The OAuth issuer; turns OAuth on. */
  oauthIssuer: 'oauthIssuer',
  /** The `aud` tokens must carry (default: the resource URL). */
  oauthAudience: 'oauthAudience',
  /** Scopes every token must hold, separated by spaces or commas. */
  oauthScopes: 'oauthScopes',
  /** The URL clients connect to, when a custom domain is in front of the Function URL. */
  oauthResourceUrl: 'oauthResourceUrl',
  /** Origins browser-based clients may call from, separated by commas (Function URL CORS). */
  corsAllowedOrigins: 'corsAllowedOrigins',
  /** `true` or `x-ray` turns on X-Ray tracing; `adot-layer` (with `tracingLayerArn`) or `otlp` (with `tracingEndpoint`) also exports OpenTelemetry spans. */
  tracing: 'tracing',
  /** The ADOT Lambda layer's ARN in the stack's region, for `tracing=adot-layer`. */
  tracingLayerArn: 'tracingLayerArn',
  /** The collector's OTLP endpoint, for `tracing=otlp`. */
  tracingEndpoint: 'tracingEndpoint',
  /** Active operations per principal (default 100). */
  maxActiveOperations: 'maxActiveOperations',
  /** `false` stops serving the handle tools to clients without async support (on by default). */
  handleTools: 'handleTools',
  /** `false` turns off `subscriptions/listen` (on by default). */
  listen: 'listen',
  /** `false` leaves the operation card out of the MCP Lambda (on by default). */
  operationCard: OPERATION_CARD_CONTEXT,
  /** Reserved concurrency of the MCP Lambda (default none). */
  mcpReservedConcurrency: 'mcpReservedConcurrency',
  /** Reserved concurrency of the status-sync Lambda (default none). */
  statusSyncReservedConcurrency: 'statusSyncReservedConcurrency',
  /** Reserved concurrency of each worker Lambda (default none). */
  workerReservedConcurrency: 'workerReservedConcurrency',
  /** Nested stacks the tools' state machines spread over (default 8; changing it moves tools between stacks). */
  toolStackCount: 'toolStackCount',
  /** Nested stacks the worker Lambdas spread over (default 4). */
  workerStackCount: 'workerStackCount',
  /** An email address told of every alarm (through an SNS topic the stack creates). */
  alarmEmail: 'alarmEmail',
  /** The EventBridge bus operation events go on, by name or ARN (default: the account's default bus). */
  eventBus: 'eventBus',
  /** `false` turns off the MCP Events extension (on by default). */
  events: 'events',
  /** Hours the event log keeps an occurrence (default 24). */
  eventsRetentionHours: 'eventsRetentionHours',
  /** The longest webhook subscription TTL, in seconds (default 3600, at most 86400). */
  eventsMaxSubscriptionTtlSeconds: 'eventsMaxSubscriptionTtlSeconds',
  /** Webhook delivery batches run at once (default 10, 2 to 1000). */
  eventsDeliveryConcurrency: 'eventsDeliveryConcurrency',
} as const;

export interface AppSettings {
  stackName: string;
  toolsDir: string;
  /** Absent: the construct's default (the repository's workers). */
  workersDir?: string;
  auth: McpAuth;
  /** Absent: no CORS. */
  corsAllowedOrigins?: string[];
  tracing: boolean | ServerTracing;
  /** Absent: the construct's default. */
  maxActiveOperations?: number;
  handleTools: boolean;
  listen: boolean;
  /** Absent: the construct's default (on). */
  operationCard?: boolean;
  /** Absent: no reservation. */
  mcpReservedConcurrency?: number;
  statusSyncReservedConcurrency?: number;
  workerReservedConcurrency?: number;
  /** Absent: the construct's defaults. */
  toolStackCount?: number;
  workerStackCount?: number;
  /** Absent: the alarms notify nobody. */
  alarmEmail?: string;
  /** A bus name or ARN; absent: the default bus. */
  eventBus?: string;
  /** The Events extension's settings, when any context key sets one; absent: the construct's defaults. */
  events?: EventsOptions;
}

const eventsKeys = ['events', 'eventsRetentionHours', 'eventsMaxSubscriptionTtlSeconds', 'eventsDeliveryConcurrency'] as const;

// Context from the command line arrives as strings; from cdk.json it may be typed.
const positiveWholeNumber = z.union([z.number(), z.string().regex(/^\d+$/, 'expected a whole number').transform(Number)]).pipe(z.number().int().positive());

const Settings = z.object({
  stackName: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9-]{0,127}$/, 'a stack name is letters, digits and hyphens, starting with a letter')
    .default('AsyncMcp'),
  toolsDir: z.string().min(1).optional(),
  workersDir: z.string().min(1).optional(),
  auth: z.enum(['iam', 'oauth', 'none']).optional(),
  functionUrlAuthType: z.enum(['AWS_IAM', 'NONE']).optional(),
  principalScope: z.enum(['role', 'session']).optional(),
  oauthIssuer: z.string().min(1).optional(),
  oauthAudience: z.string().min(1).optional(),
  oauthScopes: z.union([z.string(), z.array(z.string())]).optional(),
  oauthResourceUrl: z.string().min(1).optional(),
  corsAllowedOrigins: z.union([z.string(), z.array(z.string().min(1))]).optional(),
  tracing: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true'), z.enum(['x-ray', 'adot-layer', 'otlp'])]).default(false),
  tracingLayerArn: z.string().min(1).optional(),
  tracingEndpoint: z.string().min(1).optional(),
  maxActiveOperations: positiveWholeNumber.optional(),
  handleTools: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(true),
  listen: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(true),
  mcpReservedConcurrency: positiveWholeNumber.optional(),
  statusSyncReservedConcurrency: positiveWholeNumber.optional(),
  workerReservedConcurrency: positiveWholeNumber.optional(),
  toolStackCount: positiveWholeNumber.optional(),
  workerStackCount: positiveWholeNumber.optional(),
  alarmEmail: z.email('expected an email address').optional(),
  eventBus: z
    .string()
    .regex(/^(arn:[a-z-]+:events:[a-z0-9-]+:\d{12}:event-bus\/[A-Za-z0-9._\-/]{1,256}|[A-Za-z0-9._\-/]{1,256})$/, 'expected an event bus name or ARN')
    .optional(),
  events: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).optional(),
  eventsRetentionHours: positiveWholeNumber.optional(),
  eventsMaxSubscriptionTtlSeconds: positiveWholeNumber.optional(),
  eventsDeliveryConcurrency: positiveWholeNumber.optional(),
});

/** Reads and validates the settings; throws naming the bad context key. */
export function readAppSettings(node: Node, cwd = process.cwd()): AppSettings {
  const raw = Object.fromEntries(
    Object.entries(CONTEXT_KEYS)
      .map(([field, key]) => [field, node.tryGetContext(key) as unknown])
      .filter(([, value]) => value !== undefined),
  );
  const parsed = Settings.safeParse(raw);
  if (!parsed.success) {
    const [issue] = parsed.error.issues;
    const key = CONTEXT_KEYS[issue?.path[0] as keyof typeof CONTEXT_KEYS] ?? String(issue?.path[0]);
    throw new Error(`Invalid context "${key}": ${issue?.message ?? 'invalid'}`);
  }
  const data = parsed.data;
  const { toolsDir, workersDir, maxActiveOperations, mcpReservedConcurrency, statusSyncReservedConcurrency, workerReservedConcurrency } = parsed.data;
  const fromCwd = (dir: string) => (isAbsolute(dir) ? dir : resolve(cwd, dir));
  return {
    stackName: parsed.data.stackName,
    toolsDir: toolsDir === undefined ? DEFAULT_TOOLS_DIR : fromCwd(toolsDir),
    ...(workersDir === undefined ? {} : { workersDir: fromCwd(workersDir) }),
    auth: authFrom(data),
    ...(data.corsAllowedOrigins === undefined ? {} : { corsAllowedOrigins: list(data.corsAllowedOrigins) }),
    tracing: tracingFrom(data),
    maxActiveOperations,
    handleTools: parsed.data.handleTools,
    listen: parsed.data.listen,
    // Its own check, whose message names the key in full: only true or false, as a boolean or a string.
    ...(raw.operationCard === undefined ? {} : { operationCard: operationCardFromContext(raw.operationCard) }),
    mcpReservedConcurrency,
    statusSyncReservedConcurrency,
    workerReservedConcurrency,
    ...(data.toolStackCount === undefined ? {} : { toolStackCount: data.toolStackCount }),
    ...(data.workerStackCount === undefined ? {} : { workerStackCount: data.workerStackCount }),
    ...(data.alarmEmail === undefined ? {} : { alarmEmail: data.alarmEmail }),
    ...(data.eventBus === undefined ? {} : { eventBus: data.eventBus }),
    ...(eventsKeys.some((key) => raw[key] !== undefined)
      ? {
          events: {
            enabled: data.events ?? true,
            ...(data.eventsRetentionHours === undefined ? {} : { retentionHours: data.eventsRetentionHours }),
            ...(data.eventsMaxSubscriptionTtlSeconds === undefined ? {} : { maxSubscriptionTtl: Duration.seconds(data.eventsMaxSubscriptionTtlSeconds) }),
            ...(data.eventsDeliveryConcurrency === undefined ? {} : { deliveryConcurrency: data.eventsDeliveryConcurrency }),
          },
        }
      : {}),
  };
}

/** The `tracing` prop the context keys describe; throws naming the key that is missing or out of place. */
function tracingFrom(data: z.infer<typeof Settings>): boolean | ServerTracing {
  const { tracing, tracingLayerArn, tracingEndpoint } = data;
  if (tracingLayerArn !== undefined && tracing !== 'adot-layer')
    throw new Error(`Invalid context "${CONTEXT_KEYS.tracingLayerArn}": it needs tracing=adot-layer`);
  if (tracingEndpoint !== undefined && tracing !== 'otlp') throw new Error(`Invalid context "${CONTEXT_KEYS.tracingEndpoint}": it needs tracing=otlp`);
  if (tracing === 'adot-layer') {
    if (tracingLayerArn === undefined) throw new Error(`Invalid context "${CONTEXT_KEYS.tracingLayerArn}": tracing=adot-layer needs the layer's ARN`);
    return { exporter: 'adot-layer', layerArn: tracingLayerArn };
  }
  if (tracing === 'otlp') {
    if (tracingEndpoint === undefined) throw new Error(`Invalid context "${CONTEXT_KEYS.tracingEndpoint}": tracing=otlp needs the collector's endpoint`);
    return { exporter: 'otlp', endpoint: tracingEndpoint };
  }
  return tracing === 'x-ray' ? true : tracing;
}

/** The `auth` prop the context keys describe; throws naming the key that does not fit. */
function authFrom(data: z.infer<typeof Settings>): McpAuth {
  if (data.auth !== undefined && data.functionUrlAuthType !== undefined) {
    throw new Error(`Invalid context "${CONTEXT_KEYS.functionUrlAuthType}": set ${CONTEXT_KEYS.auth} alone (functionUrlAuthType is deprecated)`);
  }
  const oauthKeys = (['oauthAudience', 'oauthScopes', 'oauthResourceUrl'] as const).filter((key) => data[key] !== undefined);
  const legacy = data.functionUrlAuthType === undefined ? undefined : data.functionUrlAuthType === 'NONE' ? 'none' : 'iam';
  const kind = data.auth ?? legacy ?? (data.oauthIssuer !== undefined ? 'oauth' : 'iam');
  if (kind !== 'oauth' && data.oauthIssuer !== undefined) {
    throw new Error(`Invalid context "${CONTEXT_KEYS.oauthIssuer}": OAuth needs auth=oauth, not ${data.auth ?? data.functionUrlAuthType}`);
  }
  if (kind !== 'oauth' && oauthKeys.length > 0) throw new Error(`Invalid context "${oauthKeys[0]}": it needs ${CONTEXT_KEYS.oauthIssuer}`);
  if (kind !== 'iam' && data.principalScope !== undefined) {
    throw new Error(`Invalid context "${CONTEXT_KEYS.principalScope}": it applies to auth=iam only`);
  }
  if (kind === 'none') return { kind };
  if (kind === 'iam') return { kind, ...(data.principalScope ? { principalScope: data.principalScope } : {}) };
  if (data.oauthIssuer === undefined) throw new Error(`Invalid context "${CONTEXT_KEYS.oauthIssuer}": auth=oauth needs the issuer`);
  const scopes = data.oauthScopes === undefined ? [] : list(data.oauthScopes);
  return {
    kind,
    issuer: data.oauthIssuer,
    ...(data.oauthAudience ? { audience: data.oauthAudience } : {}),
    ...(scopes.length > 0 ? { requiredScopes: scopes } : {}),
    ...(data.oauthResourceUrl ? { resourceUrl: data.oauthResourceUrl } : {}),
  };
}

/** A list from the CLI (separated by spaces or commas) or from cdk.json (an array). */
function list(value: string | string[]): string[] {
  return (typeof value === 'string' ? value.split(/[\s,]+/) : value).map((item) => item.trim()).filter(Boolean);
}
