/** Turns validated tool folders into the core's catalog, with timing defaults applied. */
import { createToolCatalog, type ToolCatalog, type ToolSpec, type ToolTiming } from '../operations/tool-spec.ts';
import type { ToolConfig } from './tool-config.ts';
import type { ToolFolder } from './tool-folder.ts';

/** The services' own bounds on one execution: Step Functions' by workflow type, and a Lambda durable execution's (366 days). */
export const MAX_RUN_SECONDS = { STANDARD: 365 * 24 * 3600, EXPRESS: 5 * 60, DURABLE: 366 * 24 * 3600 } as const;

export const DEFAULT_TIMING: Omit<ToolTiming, 'maxRunSeconds'> = {
  keepAliveSeconds: 3600,
  maxKeepAliveSeconds: 7 * 24 * 3600,
  pollIntervalSeconds: 5,
  syncTimeoutSeconds: 30,
};

/**
 * Builds the catalog; `stateMachineArn(name, folder)` says where each tool's state machine,
 * or a durable tool's function (its alias ARN), lives (deployed: `deployedToolArns`;
 * locally: the facade's ARN).
 */
export function buildToolCatalog(folders: readonly ToolFolder[], stateMachineArn: (tool: string, folder: ToolFolder) => string): ToolCatalog {
  return createToolCatalog(folders.map((folder) => toToolSpec(folder, stateMachineArn(folder.config.name, folder))));
}

function toToolSpec({ config, definitionText, durable }: ToolFolder, stateMachineArn: string): ToolSpec {
  // An existing machine's timeout is its own; a local stand-in's says nothing about it.
  const ownDefinition = config.stateMachineArn === undefined ? definitionText : undefined;
  return {
    name: config.name,
    ...(config.title === undefined ? {} : { title: config.title }),
    description: config.description,
    inputSchema: config.inputSchema,
    ...(config.outputSchema === undefined ? {} : { outputSchema: config.outputSchema }),
    invocation: config.invocation,
    workflowType: config.workflowType,
    timing: {
      keepAliveSeconds: config.keepAliveSeconds ?? DEFAULT_TIMING.keepAliveSeconds,
      maxKeepAliveSeconds: config.maxKeepAliveSeconds === undefined ? DEFAULT_TIMING.maxKeepAliveSeconds : config.maxKeepAliveSeconds,
      pollIntervalSeconds: config.pollIntervalSeconds ?? DEFAULT_TIMING.pollIntervalSeconds,
      syncTimeoutSeconds: config.syncTimeoutSeconds ?? DEFAULT_TIMING.syncTimeoutSeconds,
      askBeforeTaskSeconds: config.askBeforeTaskSeconds ?? 0,
      maxRunSeconds: durable ? (config.durable?.executionTimeoutSeconds ?? MAX_RUN_SECONDS.DURABLE) : maxRunSecondsOf(ownDefinition, config.workflowType),
    },
    stateMachineArn,
    ...(config.input === 'arguments' ? { executionInput: 'arguments' as const } : {}),
    ...(config.annotations === undefined ? {} : { annotations: config.annotations }),
    ...(config.icons === undefined ? {} : { icons: config.icons }),
    ...(config._meta === undefined ? {} : { meta: config._meta }),
  };
}

/** The definition's top-level TimeoutSeconds, bounded by what the workflow type allows. */
function maxRunSecondsOf(definitionText: string | undefined, workflowType: ToolConfig['workflowType']): number {
  const bound = MAX_RUN_SECONDS[workflowType];
  if (definitionText === undefined) return bound;
  let timeout: unknown;
  try {
    timeout = (JSON.parse(definitionText) as { TimeoutSeconds?: unknown }).TimeoutSeconds;
  } catch {
    return bound;
  }
  return typeof timeout === 'number' && Number.isInteger(timeout) && timeout > 0 ? Math.min(timeout, bound) : bound;
}
