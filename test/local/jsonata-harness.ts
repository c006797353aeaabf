/** Runs one definition on the local interpreter directly and collects its outcome and event log. */
import type { InterpreterEvent } from '../../local/stepfunctions/local-interpreter.ts';
import { createLocalInterpreter, type LocalInterpreterOptions } from '../../local/stepfunctions/sfn-facade-interpreter.ts';
import { TaskTokens } from '../../local/stepfunctions/sfn-facade-task-tokens.ts';
import { createReferenceInterpreter } from './reference-engine.ts';

/** The local runtime's interpreter, or the reference it is compared against (reference-engine.ts). */
export type LocalEngine = 'asl-interpreter' | 'aws-local-stepfunctions';

export const RUN_CONTEXT = {
  executionArn: 'arn:aws:states:us-east-1:000000000000:execution:m:run-1',
  executionName: 'run-1',
  stateMachineArn: 'arn:aws:states:us-east-1:000000000000:stateMachine:m',
  stateMachineName: 'm',
};

type Worker = (event: unknown) => Promise<unknown>;

export interface RunDefinitionOptions extends Partial<Omit<LocalInterpreterOptions, 'resolveWorker'>> {
  /** Worker handlers by name; a worker not listed echoes its event. */
  workers?: Record<string, Worker>;
  /** @default 'asl-interpreter', the one the local runtime runs every machine on */
  engine?: LocalEngine;
}

/** Creates the interpreter for `definition` (throws as loading would). */
export function interpreterFor(definition: object, options: RunDefinitionOptions = {}) {
  const { workers = {}, engine = 'asl-interpreter', ...rest } = options;
  const create = engine === 'aws-local-stepfunctions' ? createReferenceInterpreter : createLocalInterpreter;
  return create('m', JSON.stringify(definition), {
    resolveWorker: (name) => workers[name] ?? (async (event) => event),
    tokens: new TaskTokens(),
    waitTimeScale: 1,
    ...rest,
  });
}

/** Runs `definition` on `input` to its end. */
export async function runDefinition(definition: object, input: unknown, options: RunDefinitionOptions = {}) {
  const events: InterpreterEvent[] = [];
  const run = interpreterFor(definition, options).run(input, RUN_CONTEXT, (event) => events.push(event));
  const outcome = await run.outcome;
  await run.logged;
  return { outcome, events };
}

/** A top-level JSONata machine of `states`, starting at the first. */
export function jsonataMachine(states: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return { QueryLanguage: 'JSONata', StartAt: Object.keys(states)[0] ?? '', States: states, ...extra };
}
