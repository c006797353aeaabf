/**
 * The tools' side of AsyncMcpServer: the worker Lambdas, the state machines and the durable
 * tool functions, spread over their nested stacks (catalog-stacks.ts), one per tool folder
 * except for tools naming an existing machine, and the grants a caller needs to start and
 * control them.
 *
 * A part of the server, not a construct of its own: what it makes sits in the server's scope
 * under the ids it always had, so the logical ids, and with them the deployed resources, stay.
 */
import { Aws, Names, type NestedStack } from 'aws-cdk-lib';
import type { IGrantable } from 'aws-cdk-lib/aws-iam';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { Construct } from 'constructs';
import { MAX_FUNCTION_NAME_PREFIX, toolFunctionName } from '../lambdas/tools/durable-function-names.ts';
import { MAX_NAME_PREFIX, toolStateMachineName } from '../lambdas/tools/state-machine-names.ts';
import { CatalogStacks } from './catalog-stacks.ts';
import { DeployedDurableGrants } from './deployed-durable-grants.ts';
import { DeployedToolGrants } from './deployed-tool-grants.ts';
import { DurableToolFunction } from './durable-tool-function.ts';
import { ExistingToolStateMachine } from './existing-tool-state-machine.ts';
import type { OperationsTable } from './operations-table.ts';
import type { ResultsBucket } from './results-bucket.ts';
import type { ServerSettings } from './server-settings.ts';
import { ToolStateMachine } from './tool-state-machine.ts';
import { createWorkerFunctions } from './worker-functions.ts';

export interface ToolMachinesProps {
  readonly settings: ServerSettings;
  readonly operations: OperationsTable;
  readonly results: ResultsBucket;
}

export class ToolMachines {
  /** Worker name -> its Lambda (in a nested stack of the workers). */
  public readonly workerFunctions: ReadonlyMap<string, NodejsFunction>;
  /** The prefix of every deployed machine's name: unique per stack and construct path, known at synth. */
  public readonly stateMachineNamePrefix: string;
  /** `arn:…:stateMachine:<prefix>`: the MCP Lambda derives every deployed machine's ARN from it. */
  public readonly stateMachineArnPrefix: string;
  /** Tool name -> the state machine deployed for it (in a nested stack of the tools). */
  public readonly deployed: ReadonlyMap<string, ToolStateMachine>;
  /** Tool name -> the existing state machine it names (`stateMachineArn`). */
  public readonly existing: ReadonlyMap<string, ExistingToolStateMachine>;
  /** The existing machines of STANDARD type, whose status changes status sync follows. */
  public readonly existingStandard: readonly ExistingToolStateMachine[];
  /** The prefix of every durable tool function's name: unique per stack and construct path, known at synth. */
  public readonly durableFunctionNamePrefix: string;
  /** `arn:…:function:<prefix>`: the MCP Lambda derives every durable tool's alias ARN from it. */
  public readonly durableFunctionArnPrefix: string;
  /** Tool name -> the durable function deployed for it (in a nested stack of the tools). */
  public readonly durable: ReadonlyMap<string, DurableToolFunction>;
  /** Whether any tool runs STANDARD or as a durable function, and so needs status sync. */
  public readonly anyStandard: boolean;
  /** The nested stacks of the tools' state machines and durable functions, and of the workers. */
  public readonly stacks: { readonly tools: readonly NestedStack[]; readonly workers: readonly NestedStack[] };
  private readonly deployedGrants: DeployedToolGrants;
  private readonly durableGrants: DeployedDurableGrants;

  constructor(scope: Construct, props: ToolMachinesProps) {
    const { settings } = props;
    const { logRetention, tracing } = settings;
    const workerStacks = new CatalogStacks(scope, 'Workers', {
      count: settings.workers.stackCount,
      holds: 'worker Lambdas',
      countProp: 'workerStackCount',
    });
    const workerFunctions = createWorkerFunctions({
      tools: settings.tools,
      workersDir: settings.workers.dir,
      stacks: workerStacks,
      operations: props.operations,
      results: props.results,
      memorySize: settings.workers.memorySize,
      timeout: settings.workers.timeout,
      logRetention,
      tracing,
      reservedConcurrentExecutions: settings.workers.reservedConcurrency,
    });
    this.workerFunctions = workerFunctions;

    // Unique per stack and construct path, and known at synth, so the MCP Lambda derives
    // every ARN from one prefix instead of a per-tool list in its 4 KB environment.
    this.stateMachineNamePrefix = `${Names.uniqueResourceName(scope, { maxLength: MAX_NAME_PREFIX - 1, separator: '-' })}-`;
    // The same rule within Lambda's shorter room (the same prefix while the path is short).
    this.durableFunctionNamePrefix = `${Names.uniqueResourceName(scope, { maxLength: MAX_FUNCTION_NAME_PREFIX - 1, separator: '-' })}-`;
    const toolsScope = new Construct(scope, 'Tools');
    const toolStacks = new CatalogStacks(scope, 'Tools', {
      count: settings.toolStackCount,
      holds: 'tool state machines',
      countProp: 'toolStackCount',
    });
    const machines = new Map<string, ToolStateMachine>();
    const existing = new Map<string, ExistingToolStateMachine>();
    const durable = new Map<string, DurableToolFunction>();
    for (const tool of settings.tools) {
      const name = tool.config.name;
      if (tool.config.stateMachineArn) {
        existing.set(name, new ExistingToolStateMachine(toolsScope, name, tool));
        continue;
      }
      if (tool.durable) {
        const functionName = toolFunctionName(this.durableFunctionNamePrefix, name);
        durable.set(
          name,
          new DurableToolFunction(toolStacks.stackFor(name), name, {
            tool,
            functionName,
            operations: props.operations,
            results: props.results,
            logRetention,
            tracing,
          }),
        );
        continue;
      }
      const stateMachineName = toolStateMachineName(this.stateMachineNamePrefix, name);
      const stack = toolStacks.stackFor(name);
      toolStacks.addDefinitionBytes(stack, Buffer.byteLength(tool.definitionText ?? ''));
      machines.set(name, new ToolStateMachine(stack, name, { tool, stateMachineName, workers: workerFunctions, logRetention, tracing: tracing.xray }));
    }
    this.deployed = machines;
    this.existing = existing;
    this.durable = durable;
    this.stacks = { tools: toolStacks.all(), workers: workerStacks.all() };
    this.existingStandard = [...existing.values()].filter((machine) => machine.workflowType === 'STANDARD');
    // Durable executions emit status changes as STANDARD machines do.
    this.anyStandard = durable.size > 0 || this.existingStandard.length > 0 || [...machines.values()].some((machine) => machine.workflowType === 'STANDARD');
    this.deployedGrants = new DeployedToolGrants(this.stateMachineNamePrefix);
    this.durableGrants = new DeployedDurableGrants(this.durableFunctionNamePrefix);
    this.stateMachineArnPrefix = `arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:stateMachine:${this.stateMachineNamePrefix}`;
    this.durableFunctionArnPrefix = `arn:${Aws.PARTITION}:lambda:${Aws.REGION}:${Aws.ACCOUNT_ID}:function:${this.durableFunctionNamePrefix}`;
  }

  /**
   * What the MCP Lambda does with the machines: start them, and for STANDARD ones describe and
   * stop executions and answer the state that asked. The deployed machines by their name
   * prefix, one statement for any number of tools; the existing ones each by its ARN.
   */
  public grantCallerAccess(grantee: IGrantable): void {
    const deployed = [...this.deployed.values()];
    this.deployedGrants.grantStart(grantee, new Set(deployed.map((machine) => machine.workflowType)));
    if (deployed.some((machine) => machine.workflowType === 'STANDARD')) this.deployedGrants.grantExecutionControl(grantee);
    // An answer resumes the state that asked; only a deployed definition can call the request-input worker.
    if (deployed.some((machine) => machine.asksForInput)) this.deployedGrants.grantTaskResponse(grantee);
    for (const machine of this.existing.values()) machine.grantStart(grantee);
    for (const machine of this.existingStandard) machine.grantExecutionControl(grantee);
    // The durable functions by their name prefix, as the deployed machines. Whether a durable.ts
    // asks the client anything is its code's business, so any durable tool may be answered.
    if (this.durable.size > 0) {
      this.durableGrants.grantStart(grantee);
      this.durableGrants.grantExecutionControl(grantee);
      this.durableGrants.grantCallbackResponse(grantee);
    }
  }

  /**
   * Describe and stop the deployed machines' executions, and the durable functions' when there
   * are any (status sync settles what it reads, and stops an execution that started too late).
   */
  public grantDeployedExecutionControl(grantee: IGrantable): void {
    this.deployedGrants.grantExecutionControl(grantee);
    if (this.durable.size > 0) this.durableGrants.grantExecutionControl(grantee);
  }
}
