/**
 * A durable tool run end to end over the in-memory core: the operation is started through
 * the core (as a tools/call would), its handler runs on the testing SDK's
 * LocalDurableTestRunner inside `withOperations`, and answers the core delivers go to the
 * runner's callback API, as the durable engine sends them to Lambda.
 */
import type { DurableLambdaHandler } from '@aws/durable-execution-sdk-js';
import { LocalDurableTestRunner } from '@aws/durable-execution-sdk-js-testing';
import { fileURLToPath } from 'node:url';
import { RoutingWorkflowEngine } from '../../lambdas/aws/routing-workflow-engine.ts';
import type { OperationKey, OperationRecord } from '../../lambdas/operations/operation.ts';
import type { RecordStore } from '../../lambdas/operations/ports.ts';
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';
import { definedToolConfig } from '../../lambdas/tools/defined-tool-config.ts';
import { withOperations } from '../../lambdas/workers/built-in-scope.ts';
import { memoryLogger } from '../support/core-harness.ts';
import { FakeWorkflowEngine } from '../support/fake-workflow-engine.ts';
import { InMemoryRecordStore } from '../support/in-memory-record-store.ts';
import { startTestOperation } from '../support/start-test-operation.ts';
import { testTool } from '../support/tool-spec-fixture.ts';

/** The tool `state-machines/<name>/durable.ts` defines, as the catalog would serve it from a durable function's alias ARN. */
export async function durableTool(name: string): Promise<ToolSpec> {
  const defined = await definedToolConfig(fileURLToPath(new URL(`../../state-machines/${name}/durable.ts`, import.meta.url)));
  if (!defined.defined || !('config' in defined)) throw new Error(`state-machines/${name}/durable.ts does not define its tool with defineTool`);
  const config = defined.config as { invocation: ToolSpec['invocation']; inputSchema: ToolSpec['inputSchema']; outputSchema?: ToolSpec['outputSchema'] };
  return testTool({
    name,
    invocation: config.invocation,
    inputSchema: config.inputSchema,
    outputSchema: config.outputSchema,
    stateMachineArn: `arn:aws:lambda:us-east-1:000000000000:function:async-mcp-tool-${name}:live`,
  });
}

/**
 * The durable side of the engine: answers go to the runner's callback (found by the name
 * the tool gave it), as DurableFunctionEngine sends them to SendDurableExecutionCallback*.
 */
class RunnerCallbacks extends FakeWorkflowEngine {
  runner?: LocalDurableTestRunner<unknown>;
  /** The callback name each callback id was found under. */
  readonly answered: Array<{ callbackId: string; name: string }> = [];

  constructor(private readonly callbackNames: string[]) {
    super();
  }

  override async sendTaskSuccess(callbackId: string, output: unknown): Promise<void> {
    await super.sendTaskSuccess(callbackId, output);
    await (await this.callback(callbackId)).sendCallbackSuccess(JSON.stringify(output));
  }

  override async sendTaskFailure(callbackId: string, failure: { error: string; cause: string }): Promise<void> {
    await super.sendTaskFailure(callbackId, failure);
    await (await this.callback(callbackId)).sendCallbackFailure({ ErrorType: failure.error, ErrorMessage: failure.cause });
  }

  private async callback(callbackId: string) {
    for (const name of this.callbackNames) {
      const operation = this.runner?.getOperation(name);
      if (operation?.getCallbackDetails()?.callbackId !== callbackId) continue;
      this.answered.push({ callbackId, name });
      return operation;
    }
    throw new Error(`no callback of the run has the id ${callbackId}`);
  }
}

/**
 * The testing runner names an execution by a bare id, where Lambda's ARN carries the name the
 * core gave it; the store shows the record under the runner's name so the core knows the run.
 */
function renamingStore(store: InMemoryRecordStore, names: { core?: string; runner?: string }, failWrites?: { error?: Error }): RecordStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'transition' && failWrites?.error) {
        const error = failWrites.error;
        return async () => {
          throw error;
        };
      }
      if (property === 'get') {
        return async (key: OperationKey) => {
          const record = await target.get(key);
          return record && names.runner && record.executionName === names.core ? { ...record, executionName: names.runner } : record;
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

export interface DurableRunOptions {
  clientCapabilities?: Record<string, unknown>;
  /** The callbacks (by name) answers may go to. */
  callbacks?: string[];
  /** While set, every record change the run asks for fails with it (the store unreachable). */
  failWrites?: { error?: Error };
}

/** Starts `tool` through the core and runs `handler` on the runner; `run` settles with the runner's result. */
export async function startDurableTool(tool: ToolSpec, handler: DurableLambdaHandler, args: Record<string, unknown>, options: DurableRunOptions = {}) {
  const inMemory = new InMemoryRecordStore();
  const names: { core?: string; runner?: string } = {};
  const store = renamingStore(inMemory, names, options.failWrites);
  const callbacks = new RunnerCallbacks(options.callbacks ?? []);
  const logger = memoryLogger();
  const { service, record } = await startTestOperation(
    { store, engine: new RoutingWorkflowEngine(new FakeWorkflowEngine(), callbacks), logger },
    { tool, arguments: args, clientCapabilities: options.clientCapabilities },
  );
  names.core = record.executionName;
  const started = callbacks.executions.get(record.executionArn ?? '');
  if (!started) throw new Error('the core did not start the durable execution');
  let invocations = 0;
  const runner = new LocalDurableTestRunner<unknown>({
    // The local stack runs each durable handler inside withOperations, as here.
    handlerFunction: (event, context) => {
      invocations++;
      names.runner = event.DurableExecutionArn;
      return withOperations(service, () => handler(event, context));
    },
  });
  callbacks.runner = runner;
  const run = runner.run({ payload: started.input });
  return {
    service,
    store,
    runner,
    run,
    logger,
    callbacks,
    executionInput: started.input,
    invocations: () => invocations,
    /** The operation's record as the core reads it now. */
    current: (): Promise<OperationRecord> => service.readCurrent(record),
    key: { ownerId: record.ownerId, token: record.token } as OperationKey,
  };
}
