/**
 * Tool folders beyond workers (issue 11): `permissions` statements, existing machines by
 * `stateMachineArn`, `mocks.json` in the Step Functions Local format, Tasks that cannot run
 * locally, and every problem reported at once.
 */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { buildToolCatalog, MAX_RUN_SECONDS } from '../../lambdas/tools/tool-catalog.ts';
import { inspectToolFolders, loadToolFolders, type ToolFolderError } from '../../lambdas/tools/tool-folder.ts';
import { deployedStateMachineArns, toolStateMachineName } from '../../lambdas/tools/state-machine-names.ts';

const tool = (name: string, extra: Record<string, unknown> = {}) => ({
  name,
  description: 'A tool',
  inputSchema: { type: 'object' },
  invocation: 'async',
  ...extra,
});
const getItem = {
  StartAt: 'GetItem',
  States: {
    GetItem: {
      Type: 'Task',
      Resource: 'arn:aws:states:::dynamodb:getItem',
      Parameters: { TableName: 'items', Key: { pk: { 'S.$': '$.arguments.id' } } },
      End: true,
    },
  },
};
const mocksFor = (machine: string, testCases: Record<string, Record<string, string>>, responses: Record<string, unknown>) => ({
  StateMachines: { [machine]: { TestCases: testCases } },
  MockedResponses: responses,
});
const ARN = 'arn:aws:states:eu-west-1:123456789012:stateMachine:orders-pipeline';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'tools-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function writeFolder(name: string, files: Record<string, unknown>): Promise<void> {
  await mkdir(join(dir, name), { recursive: true });
  for (const [file, content] of Object.entries(files)) {
    await writeFile(join(dir, name, file), typeof content === 'string' ? content : JSON.stringify(content));
  }
}

async function problemsOf(): Promise<ToolFolderError[]> {
  return (await inspectToolFolders(dir)).problems;
}

describe('permissions', () => {
  it('accepts IAM statements with Effect, Action, Resource and an optional Condition', async () => {
    const permissions = [
      { Effect: 'Allow', Action: 'dynamodb:GetItem', Resource: 'arn:aws:dynamodb:${AWS::Region}:${AWS::AccountId}:table/items' },
      {
        Sid: 'Deny',
        Effect: 'Deny',
        Action: ['s3:DeleteObject'],
        Resource: ['arn:aws:s3:::bucket/key'],
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      },
    ];
    await writeFolder('reader', {
      'tool.json': tool('reader', { permissions }),
      'definition.asl.json': getItem,
      'mocks.json': mocksFor('reader', { Default: { GetItem: 'Item' } }, { Item: { 0: { Return: { Item: {} } } } }),
    });
    const [folder] = await loadToolFolders(dir);
    expect(folder!.config.permissions).toEqual(permissions);
  });

  it('refuses a malformed statement, naming the field', async () => {
    await writeFolder('reader', {
      'tool.json': tool('reader', { permissions: [{ Effect: 'Permit', Action: 'GetItem', Resource: 'items' }] }),
      'definition.asl.json': getItem,
    });
    const reasons = (await problemsOf()).map((problem) => problem.reason).join('\n');
    expect(reasons).toMatch(/permissions\.0\.Effect/);
    expect(reasons).toMatch(/permissions\.0\.Action: an action is "<service>:<Action>"/);
    expect(reasons).toMatch(/permissions\.0\.Resource: a resource is an ARN/);
  });

  it('refuses a wildcard in Action or Resource without a reason, and accepts it with one', async () => {
    const wildcard = { Effect: 'Allow', Action: 'dynamodb:*', Resource: 'arn:aws:dynamodb:us-east-1:123456789012:table/items/*' };
    await writeFolder('reader', { 'tool.json': tool('reader', { permissions: [wildcard] }), 'definition.asl.json': getItem });
    const [problem] = await problemsOf();
    expect(problem!.reason).toMatch(
      /permissions\.0\.reason: "dynamodb:\*", "arn:aws:dynamodb:us-east-1:123456789012:table\/items\/\*" contains a wildcard: add "reason"/,
    );

    await writeFolder('reader', { 'tool.json': tool('reader', { permissions: [{ ...wildcard, reason: 'The table indexes change with each release.' }] }) });
    expect((await problemsOf()).filter((p) => p.file.endsWith('tool.json'))).toEqual([]);
  });

  it('refuses a Resource substituting anything but the pseudo parameters', async () => {
    await writeFolder('reader', {
      'tool.json': tool('reader', { permissions: [{ Effect: 'Allow', Action: 'sqs:SendMessage', Resource: 'arn:aws:sqs:${Region}:1:q' }] }),
      'definition.asl.json': getItem,
    });
    expect((await problemsOf())[0]!.reason).toMatch(/may substitute only \$\{AWS::Partition\}/);
  });
});

describe('existing state machines (stateMachineArn)', () => {
  it('need no definition, default to the envelope input, and keep their own ARN when deployed', async () => {
    await writeFolder('orders', { 'tool.json': tool('orders', { stateMachineArn: ARN }) });
    await writeFolder('plain', {
      'tool.json': tool('plain'),
      'definition.asl.json': { StartAt: 'A', TimeoutSeconds: 60, States: { A: { Type: 'Pass', End: true } } },
    });
    const folders = await loadToolFolders(dir);
    const orders = folders.find((f) => f.config.name === 'orders')!;
    expect(orders.definitionText).toBeUndefined();
    expect(orders.config.input ?? 'envelope').toBe('envelope');
    expect(orders.localProblems).toEqual([]);
    const catalog = buildToolCatalog(folders, deployedStateMachineArns('arn:aws:states:us-east-1:123456789012:stateMachine:Stack-Server-1234-'));
    expect(catalog.get('orders')).toMatchObject({ stateMachineArn: ARN, timing: { maxRunSeconds: MAX_RUN_SECONDS.STANDARD } });
    expect(catalog.get('plain')).toMatchObject({
      stateMachineArn: 'arn:aws:states:us-east-1:123456789012:stateMachine:Stack-Server-1234-plain',
      timing: { maxRunSeconds: 60 },
    });
  });

  it('take input "arguments", but only with stateMachineArn, and no permissions', async () => {
    await writeFolder('orders', { 'tool.json': tool('orders', { stateMachineArn: ARN, input: 'arguments' }) });
    expect((await loadToolFolders(dir))[0]!.config.input).toBe('arguments');
    await writeFolder('plain', { 'tool.json': tool('plain', { input: 'arguments' }), 'definition.asl.json': getItem });
    await writeFolder('withrole', { 'tool.json': tool('withrole', { stateMachineArn: ARN, permissions: [] }) });
    const reasons = (await problemsOf()).map((problem) => problem.reason);
    expect(reasons).toContain('input applies only to an existing state machine: add stateMachineArn or remove input');
    expect(reasons.some((reason) => reason.includes('an existing state machine (stateMachineArn) keeps its own role'))).toBe(true);
  });

  it('refuses an ARN that is not a state machine ARN', async () => {
    await writeFolder('orders', { 'tool.json': tool('orders', { stateMachineArn: 'arn:aws:lambda:us-east-1:123456789012:function:x' }) });
    expect((await problemsOf())[0]!.reason).toMatch(/stateMachineArn must be a state machine ARN/);
  });

  it('without a stand-in, run locally as a Fail state that names the ARN and what to add', async () => {
    await writeFolder('orders', { 'tool.json': tool('orders', { stateMachineArn: ARN }) });
    const [folder] = await loadToolFolders(dir);
    const fail = JSON.parse(folder!.localDefinitionText).States.NoLocalStandIn;
    expect(fail).toMatchObject({ Type: 'Fail', Error: 'Local.NoStandIn' });
    expect(fail.Cause).toContain(ARN);
    expect(fail.Cause).toMatch(/put its definition\.asl\.json or a mocks\.json beside the tool's tool\.json/);
  });

  it('with only mocks.json, run locally as its one mocked state, the mocks keyed by the tool or the machine name', async () => {
    const mocks = mocksFor('orders-pipeline', { Default: { Execution: 'Done' } }, { Done: { 0: { Return: { ok: true } } } });
    await writeFolder('orders', { 'tool.json': tool('orders', { stateMachineArn: ARN }), 'mocks.json': mocks });
    const [folder] = await loadToolFolders(dir);
    expect(JSON.parse(folder!.localDefinitionText)).toMatchObject({ StartAt: 'Execution', States: { Execution: { Type: 'Task', End: true } } });
    expect(folder!.mocks?.states.get('Execution')?.byInvocation).toEqual([{ Return: { ok: true } }]);
  });
});

describe('mocks.json', () => {
  const definitionWith = (states: Record<string, unknown>, startAt: string) => ({ StartAt: startAt, States: states });

  it('resolves the Default test case and index ranges such as "1-2"', async () => {
    const mocks = mocksFor(
      'reader',
      { Other: { GetItem: 'Fails' }, Default: { GetItem: 'Flaky' } },
      {
        Fails: { 0: { Throw: { Error: 'X', Cause: 'y' } } },
        Flaky: { 0: { Throw: { Error: 'A', Cause: 'a' } }, '1-2': { Throw: { Error: 'B', Cause: 'b' } }, 3: { Return: { Item: {} } } },
      },
    );
    await writeFolder('reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem, 'mocks.json': mocks });
    const [folder] = await loadToolFolders(dir);
    expect(folder!.mocks!.testCase).toBe('Default');
    expect(folder!.mocks!.states.get('GetItem')!.byInvocation.map((r) => ('Throw' in r ? r.Throw.Error : 'Return'))).toEqual(['A', 'B', 'B', 'Return']);
  });

  it('uses the only test case when there is no Default, and refuses to guess between several', async () => {
    const responses = { Item: { 0: { Return: {} } } };
    await writeFolder('reader', {
      'tool.json': tool('reader'),
      'definition.asl.json': getItem,
      'mocks.json': mocksFor('reader', { HappyPath: { GetItem: 'Item' } }, responses),
    });
    expect((await loadToolFolders(dir))[0]!.mocks!.testCase).toBe('HappyPath');
    await writeFolder('reader', { 'mocks.json': mocksFor('reader', { HappyPath: { GetItem: 'Item' }, RetryPath: { GetItem: 'Item' } }, responses) });
    expect((await problemsOf())[0]!.reason).toBe('StateMachines.reader.TestCases has "HappyPath", "RetryPath": name the one to use "Default"');
  });

  it('reports every malformed response: gaps, overlaps, bad keys, both or neither of Return and Throw', async () => {
    const mocks = mocksFor(
      'reader',
      { Default: { GetItem: 'Gap' } },
      {
        Gap: { 0: { Return: 1 }, 2: { Return: 2 } },
        Overlap: { '0-1': { Return: 1 }, 1: { Return: 2 } },
        BadKey: { first: { Return: 1 } },
        Both: { 0: { Return: 1, Throw: { Error: 'E' } } },
      },
    );
    await writeFolder('reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem, 'mocks.json': mocks });
    const reasons = (await problemsOf()).map((problem) => problem.reason);
    expect(reasons).toEqual([
      'MockedResponses.Gap: invocation 1 has no response (indexes must run 0, 1, 2, ... without gaps)',
      'MockedResponses.Overlap: invocation 1 is defined twice',
      'MockedResponses.BadKey: "first" is not an invocation index: use "0", "1", ... or a range such as "1-2"',
      'MockedResponses.Both: "0" must be { "Return": <output> } or { "Throw": { "Error": "...", "Cause": "..." } }',
    ]);
  });

  it('refuses a test case naming an undefined response, or a state the definition lacks or that is no Task', async () => {
    const { End: _end, ...getItemState } = getItem.States.GetItem;
    const definition = definitionWith({ GetItem: { ...getItemState, Next: 'Done' }, Done: { Type: 'Pass', End: true } }, 'GetItem');
    const responses = { Item: { 0: { Return: {} } } };
    await writeFolder('reader', {
      'tool.json': tool('reader'),
      'definition.asl.json': definition,
      'mocks.json': mocksFor('reader', { Default: { GetItem: 'Missing' } }, responses),
    });
    expect((await problemsOf())[0]!.reason).toBe('StateMachines.reader.TestCases.Default.GetItem names "Missing", which MockedResponses does not define');
    await writeFolder('reader', { 'mocks.json': mocksFor('reader', { Default: { GetItem: 'Item', Done: 'Item', Nowhere: 'Item' } }, responses) });
    const [folder] = await loadToolFolders(dir);
    expect(folder!.localProblems.map((problem) => problem.reason)).toEqual([
      'mocks.json mocks state "Done", which is a Pass state, not a Task',
      'mocks.json mocks state "Nowhere", which the definition does not have',
    ]);
  });

  it('refuses mocks for another state machine, naming the entry to add', async () => {
    await writeFolder('reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem, 'mocks.json': mocksFor('writer', { Default: {} }, {}) });
    expect((await problemsOf())[0]!.reason).toBe('StateMachines has "writer"; name this tool\'s entry "reader"');
  });
});

describe('Tasks that cannot run locally', () => {
  it('are named with their folder, state and what to add (a missing mock), while the folder still deploys', async () => {
    await writeFolder('reader', { 'tool.json': tool('reader'), 'definition.asl.json': getItem });
    const { folders, problems } = await inspectToolFolders(dir);
    expect(problems).toEqual([]);
    const [problem] = folders[0]!.localProblems;
    expect(problem!.file).toBe(join(dir, 'reader', 'definition.asl.json'));
    expect(problem!.reason).toMatch(
      /^state "GetItem" calls "arn:aws:states:::dynamodb:getItem", which cannot run locally: add mocks\.json with a mocked response for it \(StateMachines\.reader\.TestCases\.Default\.GetItem/,
    );
  });

  it('include no worker call, in Parameters (JSONPath) or Arguments (JSONata)', async () => {
    const definition = {
      StartAt: 'Direct',
      States: {
        Direct: { Type: 'Task', Resource: '${Worker_calculate}', Next: 'Invoke' },
        Invoke: {
          Type: 'Task',
          Resource: 'arn:aws:states:::lambda:invoke',
          Parameters: { FunctionName: '${Worker_calculate}', 'Payload.$': '$' },
          Next: 'Jsonata',
        },
        Jsonata: {
          Type: 'Task',
          QueryLanguage: 'JSONata',
          Resource: 'arn:aws:states:::lambda:invoke.waitForTaskToken',
          Arguments: { FunctionName: '${Worker_calculate}', Payload: '{% $states.context.Task.Token %}' },
          End: true,
        },
      },
    };
    await writeFolder('calc', { 'tool.json': tool('calc'), 'definition.asl.json': definition });
    expect((await loadToolFolders(dir))[0]!.localProblems).toEqual([]);
  });
});

describe('inspectToolFolders', () => {
  it('reports every problem of every folder, each with its file, instead of the first', async () => {
    await writeFolder('a', { 'tool.json': tool('a', { invocation: 'sometimes', pollIntervalSecs: 3 }), 'definition.asl.json': getItem });
    await writeFolder('b', { 'tool.json': tool('b'), 'definition.asl.json': { StartAt: 'Nowhere', States: { A: { Type: 'Pass', Next: 'Gone' } } } });
    await writeFolder('c', { 'tool.json': '{ "name": ' });
    const problems = await problemsOf();
    const byFile = problems.map((problem) => `${problem.file.slice(dir.length + 1)}: ${problem.reason}`);
    expect(byFile.filter((line) => line.startsWith(join('a', 'tool.json')))).toHaveLength(2);
    expect(
      byFile.filter((line) => line.startsWith(join('b', 'definition.asl.json')) && line.includes('not valid Amazon States Language')).length,
    ).toBeGreaterThan(1);
    expect(byFile.some((line) => line.startsWith(join('c', 'tool.json')) && line.includes('not valid JSON'))).toBe(true);
    // loadToolFolders stops at the first of them.
    await expect(loadToolFolders(dir)).rejects.toMatchObject({ file: problems[0]!.file, reason: problems[0]!.reason });
  });
});

describe('deterministic state machine names', () => {
  it('are <prefix><tool> within 80 characters, a hash telling long names apart', () => {
    expect(toolStateMachineName('Stack-Server-1234-', 'quick_calculation')).toBe('Stack-Server-1234-quick_calculation');
    const long = (suffix: string) => toolStateMachineName('Stack-Server-1234-', `${'x'.repeat(100)}${suffix}`);
    expect(long('a')).toHaveLength(80);
    expect(long('a')).not.toBe(long('b'));
  });
});
