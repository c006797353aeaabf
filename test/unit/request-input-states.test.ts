/**
 * The definition checks and payload injection for states that ask the client a question
 * (lambdas/tools/request-input-states.ts), and that a tool folder with a problem stops
 * loading (so startup, validate-tools and synth) naming its definition file.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { INPUT_ERRORS } from '../../lambdas/operations/input-requests.ts';
import { ASK_FAILED_RETRY, injectRequestInputContext } from '../../lambdas/tools/request-input-states.ts';
import { loadToolFolders, ToolFolderError } from '../../lambdas/tools/tool-folder.ts';

const WAIT = 'arn:aws:states:::lambda:invoke.waitForTaskToken';
const WORKER = '${Worker_request_input}';
const question = { method: 'elicitation/create', params: { message: 'Go?', requestedSchema: { type: 'object', properties: {} } } };

/** A JSONPath Task state that asks, with `payload` overriding the usual Payload fields. */
function jsonPathAsk(payload: Record<string, unknown> = {}, extra: Record<string, unknown> = {}) {
  return {
    Type: 'Task',
    Resource: WAIT,
    Parameters: { FunctionName: WORKER, Payload: withOverrides({ 'taskToken.$': '$$.Task.Token', key: 'confirm', request: question }, payload) },
    ...withOverrides({ End: true }, extra),
  };
}

/** A JSONata Task state that asks. */
function jsonataAsk(payload: Record<string, unknown> = {}) {
  return {
    Type: 'Task',
    Resource: WAIT,
    Arguments: { FunctionName: WORKER, Payload: withOverrides({ taskToken: '{% $states.context.Task.Token %}', request: question }, payload) },
    End: true,
  };
}

/** The usual fields with `overrides` applied; an `undefined` override removes the field. */
function withOverrides(base: Record<string, unknown>, overrides: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries({ ...base, ...overrides }).filter(([, value]) => value !== undefined));
}

const machine = (states: Record<string, unknown>, top: Record<string, unknown> = {}) => ({ StartAt: Object.keys(states)[0], States: states, ...top });

/** The Payload of state `name`, wherever it is nested, in the injected definition. */
function payloadOf(definition: unknown, path: string[]): Record<string, unknown> {
  let node = definition as Record<string, unknown>;
  for (const step of path) node = node[step] as Record<string, unknown>;
  return ((node.Parameters ?? node.Arguments) as { Payload: Record<string, unknown> }).Payload;
}

describe('injectRequestInputContext', () => {
  it('leaves a definition that never asks untouched (the very same object)', () => {
    const definition = machine({ Done: { Type: 'Pass', End: true } });
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result).toEqual({ definition, asks: false, problems: [] });
    expect(result.definition).toBe(definition);
  });

  it('adds the execution name and the operation to a JSONPath payload as paths, without changing the input definition', () => {
    const definition = machine({ Ask: jsonPathAsk() });
    const before = structuredClone(definition);
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result.asks).toBe(true);
    expect(result.problems).toEqual([]);
    expect(payloadOf(result.definition, ['States', 'Ask'])).toEqual({
      'taskToken.$': '$$.Task.Token',
      key: 'confirm',
      request: question,
      'executionName.$': '$$.Execution.Name',
      'operation.$': '$$.Execution.Input.operation',
      asking: { 'enteredTime.$': '$$.State.EnteredTime', 'retryCount.$': '$$.State.RetryCount', 'stateName.$': '$$.State.Name', concurrent: false },
    });
    expect(definition).toEqual(before);
  });

  it('makes every asking state retry Mcp.AskFailed with backoff, first, unless its own Retry names it', () => {
    const others = { ErrorEquals: ['States.ALL'], MaxAttempts: 1 };
    const result = injectRequestInputContext(
      machine({
        Ask: jsonPathAsk({}, { Retry: [others], End: undefined, Next: 'Again' }),
        Again: jsonPathAsk({}, { Retry: [{ ErrorEquals: ['Mcp.AskFailed'], MaxAttempts: 2 }] }),
      }),
      { envelope: true },
    );
    const states = (result.definition as { States: Record<string, { Retry: unknown[] }> }).States;
    expect(states.Ask!.Retry).toEqual([ASK_FAILED_RETRY, others]);
    expect(states.Again!.Retry).toEqual([{ ErrorEquals: ['Mcp.AskFailed'], MaxAttempts: 2 }]);
    expect(ASK_FAILED_RETRY.ErrorEquals).toEqual([INPUT_ERRORS.askFailed]);
  });

  it('adds them to a JSONata payload as expressions over $states.context', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonataAsk() }, { QueryLanguage: 'JSONata' }), { envelope: true });
    expect(result.problems).toEqual([]);
    expect(payloadOf(result.definition, ['States', 'Ask'])).toMatchObject({
      executionName: '{% $states.context.Execution.Name %}',
      operation: '{% $states.context.Execution.Input.operation %}',
    });
  });

  it('follows a state-level QueryLanguage over the machine-level one', () => {
    const result = injectRequestInputContext(machine({ Ask: { ...jsonataAsk(), QueryLanguage: 'JSONata' } }), { envelope: true });
    expect(result.problems).toEqual([]);
    expect(payloadOf(result.definition, ['States', 'Ask'])).toMatchObject({ executionName: '{% $states.context.Execution.Name %}' });
  });

  it('adds no operation for a machine whose input is not our envelope (an existing machine given the arguments)', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk() }), { envelope: false });
    const payload = payloadOf(result.definition, ['States', 'Ask']);
    expect(payload['executionName.$']).toBe('$$.Execution.Name');
    expect(payload).not.toHaveProperty('operation.$');
  });

  it('injects into states nested in Parallel branches and Map processors (ItemProcessor and the older Iterator)', () => {
    const definition = machine({
      Both: {
        Type: 'Parallel',
        Branches: [machine({ First: jsonPathAsk({ key: 'first' }) }), machine({ Second: jsonPathAsk({ key: 'second' }) })],
        Next: 'Each',
      },
      Each: { Type: 'Map', ItemProcessor: machine({ PerItem: jsonPathAsk({ key: 'item' }) }), Next: 'Old' },
      Old: { Type: 'Map', Iterator: machine({ Legacy: jsonPathAsk({ key: 'legacy' }) }), End: true },
    });
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result.problems).toEqual([]);
    for (const path of [
      ['States', 'Both', 'Branches', '0', 'States', 'First'],
      ['States', 'Both', 'Branches', '1', 'States', 'Second'],
      ['States', 'Each', 'ItemProcessor', 'States', 'PerItem'],
      ['States', 'Old', 'Iterator', 'States', 'Legacy'],
    ]) {
      expect(payloadOf(result.definition, path), path.join('.')).toMatchObject({
        'executionName.$': '$$.Execution.Name',
        'operation.$': '$$.Execution.Input.operation',
      });
    }
  });

  it('injects into JSONata states inside a JSONata Parallel', () => {
    const definition = machine(
      {
        Both: { Type: 'Parallel', Branches: [machine({ First: jsonataAsk({ key: 'first' }) }), machine({ Second: jsonataAsk({ key: 'second' }) })], End: true },
      },
      { QueryLanguage: 'JSONata' },
    );
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result.problems).toEqual([]);
    expect(payloadOf(result.definition, ['States', 'Both', 'Branches', '1', 'States', 'Second'])).toMatchObject({
      executionName: '{% $states.context.Execution.Name %}',
    });
  });

  it('reports a state that calls the worker without .waitForTaskToken, directly or through lambda:invoke', () => {
    const direct = injectRequestInputContext(machine({ Ask: { Type: 'Task', Resource: WORKER, End: true } }), { envelope: true });
    expect(direct.problems).toEqual([
      expect.stringMatching(/state "Ask" calls \$\{Worker_request_input\}.*"Resource": "arn:aws:states:::lambda:invoke\.waitForTaskToken"/),
    ]);
    const invoke = injectRequestInputContext(machine({ Ask: { ...jsonPathAsk(), Resource: 'arn:aws:states:::lambda:invoke' } }), { envelope: true });
    expect(invoke.problems).toEqual([expect.stringMatching(/state "Ask" .*waitForTaskToken/)]);
  });

  it('reports a Payload that is not an object: a path, a missing Parameters, or a JSONata string', () => {
    const path = injectRequestInputContext(
      machine({ Ask: { Type: 'Task', Resource: WAIT, Parameters: { FunctionName: WORKER, 'Payload.$': '$' }, End: true } }),
      { envelope: true },
    );
    expect(path.problems).toEqual([expect.stringMatching(/state "Ask": Parameters\.Payload must be an object/)]);
    const jsonata = injectRequestInputContext(
      machine(
        { Ask: { Type: 'Task', Resource: WAIT, Arguments: { FunctionName: WORKER, Payload: '{% $states.input %}' }, End: true } },
        { QueryLanguage: 'JSONata' },
      ),
      { envelope: true },
    );
    expect(jsonata.problems).toEqual([expect.stringMatching(/state "Ask": Arguments\.Payload must be an object/)]);
  });

  it('reports a JSONPath payload without the task token, naming the field to add', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk({ 'taskToken.$': undefined }) }), { envelope: true });
    expect(result.problems).toEqual([expect.stringContaining('state "Ask": the Payload needs the task token, "taskToken.$": "$$.Task.Token"')]);
  });

  it('reports a JSONata payload without the task token, naming the expression to add', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonataAsk({ taskToken: undefined }) }, { QueryLanguage: 'JSONata' }), { envelope: true });
    expect(result.problems).toEqual([expect.stringContaining('"taskToken": "{% $states.context.Task.Token %}"')]);
  });

  it('reports a JSONPath payload whose token is a literal string (taskToken without .$), which would never resume the state', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk({ 'taskToken.$': undefined, taskToken: '$$.Task.Token' }) }), { envelope: true });
    expect(result.problems).toEqual([expect.stringContaining('"taskToken.$": "$$.Task.Token"')]);
  });

  it('reports a JSONata payload whose token is JSONPath syntax instead of an expression, which would pass the literal text as the token', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonataAsk({ taskToken: '$$.Task.Token' }) }, { QueryLanguage: 'JSONata' }), { envelope: true });
    expect(result.problems).toEqual([
      expect.stringContaining('state "Ask": the Payload needs the task token, "taskToken": "{% $states.context.Task.Token %}"'),
    ]);
  });

  it('reports a payload without a request', () => {
    const jsonPath = injectRequestInputContext(machine({ Ask: jsonPathAsk({ request: undefined }) }), { envelope: true });
    expect(jsonPath.problems).toEqual([expect.stringMatching(/state "Ask": the Payload needs the question, "request"/)]);
    const fromInput = injectRequestInputContext(machine({ Ask: jsonPathAsk({ request: undefined, 'request.$': '$.question' }) }), { envelope: true });
    expect(fromInput.problems).toEqual([]);
  });

  it('reports a literal request method that is not one a server may send the client', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk({ request: { method: 'tools/call', params: {} } }) }), { envelope: true });
    expect(result.problems).toEqual([
      expect.stringMatching(/state "Ask": request\.method "tools\/call" .*elicitation\/create, sampling\/createMessage or roots\/list/),
    ]);
    const computed = injectRequestInputContext(machine({ Ask: jsonPathAsk({ request: { 'method.$': '$.kind', params: {} } }) }), { envelope: true });
    expect(computed.problems).toEqual([]);
  });

  it('reports a payload that sets the fields the loader adds, instead of silently replacing them', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk({ 'executionName.$': '$.name' }) }), { envelope: true });
    expect(result.problems).toEqual([expect.stringMatching(/state "Ask": the Payload sets executionName, which the loader adds/)]);
  });

  it('reports a question asked inside a distributed Map, whose child executions are not the operation', () => {
    const definition = machine({
      Each: {
        Type: 'Map',
        ItemProcessor: { ProcessorConfig: { Mode: 'DISTRIBUTED', ExecutionType: 'STANDARD' }, ...machine({ PerItem: jsonPathAsk() }) },
        End: true,
      },
    });
    const result = injectRequestInputContext(definition, { envelope: true });
    expect(result.problems).toEqual([expect.stringMatching(/state "PerItem" is inside the distributed Map "Each"/)]);
  });

  it('reports a state that names the worker where neither runtime calls it (a qualified FunctionName)', () => {
    const state = jsonPathAsk();
    (state.Parameters as Record<string, unknown>).FunctionName = `${WORKER}:$LATEST`;
    const result = injectRequestInputContext(machine({ Ask: state }), { envelope: true });
    expect(result.asks).toBe(true);
    expect(result.problems).toEqual([expect.stringMatching(/state "Ask" names \$\{Worker_request_input\} .*"FunctionName": "\$\{Worker_request_input\}"/)]);
  });

  it('reports an EXPRESS workflow that asks: Express workflows cannot wait for a task token', () => {
    const result = injectRequestInputContext(machine({ Ask: jsonPathAsk() }), { envelope: true, workflowType: 'EXPRESS' });
    expect(result.problems).toEqual([expect.stringMatching(/EXPRESS .*STANDARD/)]);
    expect(injectRequestInputContext(machine({ Ask: jsonPathAsk() }), { envelope: true, workflowType: 'STANDARD' }).problems).toEqual([]);
  });

  it('reports every asking state with a problem, not just the first', () => {
    const result = injectRequestInputContext(
      machine({ One: jsonPathAsk({ request: undefined }, { End: undefined, Next: 'Two' }), Two: jsonPathAsk({ 'taskToken.$': undefined }) }),
      {
        envelope: true,
      },
    );
    expect(result.problems).toHaveLength(2);
  });
});

describe('a tool folder whose asking state has a problem', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'input-tools-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  async function writeTool(definition: unknown) {
    await mkdir(join(dir, 'ask'), { recursive: true });
    const tool = { name: 'ask', description: 'Asks', inputSchema: { type: 'object' }, invocation: 'async' };
    await writeFile(join(dir, 'ask', 'tool.json'), JSON.stringify(tool));
    await writeFile(join(dir, 'ask', 'definition.asl.json'), JSON.stringify(definition));
  }

  it('stops loading with a ToolFolderError naming definition.asl.json and the state', async () => {
    await writeTool(machine({ Ask: jsonPathAsk({ 'taskToken.$': undefined }) }));
    const error = await loadToolFolders(dir).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ToolFolderError);
    expect((error as ToolFolderError).file).toBe(join(dir, 'ask', 'definition.asl.json'));
    expect((error as ToolFolderError).message).toMatch(/state "Ask": the Payload needs the task token/);
  });

  it('loads a correct one with the fields added to what both runtimes run, and the worker listed', async () => {
    await writeTool(machine({ Ask: jsonPathAsk() }));
    const [folder] = await loadToolFolders(dir);
    expect(folder!.workers).toEqual(['request_input']);
    const deployed = JSON.parse(folder!.definitionText!) as unknown;
    expect(payloadOf(deployed, ['States', 'Ask'])).toMatchObject({ 'executionName.$': '$$.Execution.Name', 'operation.$': '$$.Execution.Input.operation' });
    expect(JSON.parse(folder!.localDefinitionText)).toEqual(deployed);
  });
});
