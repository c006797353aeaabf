/**
 * The conformance fixture tools load like any tool folder (schema, ASL validation) and
 * declare what the scenarios require of them, so `npm run conformance` never fails
 * on a fixture that would not even start. The fixtures that ask the client for input are
 * also run on the local stack through the core, whatever the dialect: each asks exactly
 * the questions its scenario checks (keys, methods, parameters) and ends with the text the
 * scenario looks for once answered the way the suite answers.
 */
import { resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ownerIdFor } from '../../lambdas/operations/fingerprint.ts';
import { isTerminal, type InputRequestMessage, type Outcome } from '../../lambdas/operations/operation.ts';
import type { InputAnswer } from '../../lambdas/operations/input-requests.ts';
import { loadToolFolders } from '../../lambdas/tools/tool-folder.ts';
import { startLocalStack, type LocalStack } from '../../local/local-stack.ts';

const TOOLS_DIR = resolve(import.meta.dirname, 'tools');
/** What the 2026-07-28 suite's stateless requests declare (its default client capabilities). */
const ALL_INPUT_KINDS = { elicitation: {}, sampling: {}, roots: { listChanged: true } };
/** The answers the suite gives: an accepted elicitation, a model's message, one root. */
const accept = (content: Record<string, unknown>): InputAnswer => ({ result: { action: 'accept', content } });
const sampled = (text: string): InputAnswer => ({ result: { role: 'assistant', content: { type: 'text', text }, model: 'test-model', stopReason: 'endTurn' } });
const ROOTS: InputAnswer = { result: { roots: [{ uri: 'file:///test/root', name: 'Test Root' }] } };

describe('conformance fixture tools', () => {
  it('greet and the reference-server tools are sync-only; slow_compute supports tasks; the task fixtures require them', async () => {
    const folders = await loadToolFolders(TOOLS_DIR);
    expect(Object.fromEntries(folders.map((f) => [f.config.name, f.config.invocation]))).toEqual({
      confirm_delete: 'async',
      echo: 'sync',
      failing_job: 'async',
      greet: 'sync',
      json_schema_2020_12_tool: 'sync',
      multi_input: 'async',
      protocol_error_job: 'async',
      slow_compute: 'both',
      test_audio_content: 'sync',
      test_custom_headers: 'sync',
      test_elicitation: 'sync',
      test_elicitation_sep1034_defaults: 'sync',
      test_elicitation_sep1330_enums: 'sync',
      test_embedded_resource: 'sync',
      test_error_handling: 'sync',
      test_image_content: 'sync',
      test_input_required_result_capabilities: 'sync',
      test_input_required_result_elicitation: 'sync',
      test_input_required_result_list_roots: 'sync',
      test_input_required_result_multi_round: 'sync',
      test_input_required_result_multiple_inputs: 'sync',
      test_input_required_result_request_state: 'sync',
      test_input_required_result_sampling: 'sync',
      test_input_required_result_tampered_state: 'sync',
      test_logging_tool: 'sync',
      test_missing_capability: 'sync',
      test_multiple_content_types: 'sync',
      test_sampling: 'sync',
      test_simple_text: 'sync',
      test_streaming_elicitation: 'sync',
      test_tool_with_logging: 'sync',
      test_tool_with_progress: 'sync',
      test_tool_with_task: 'async',
    });
    // http-header-validation calls the first tool a 2026-07-28 client without tasks sees, with no arguments.
    const firstListed = folders.map((f) => f.config).filter((c) => c.invocation !== 'async')[0]!;
    expect(firstListed.name).toBe('echo');
    expect(firstListed.inputSchema.required).toBeUndefined();
    // Pure ASL: the only workers named are the built-in ones (asking the client, reporting progress), which the stack provides.
    expect([...new Set(folders.flatMap((f) => f.workers))].sort()).toEqual(['report_progress', 'request_input']);
    // A question needs .waitForTaskToken, which only STANDARD workflows have.
    for (const folder of folders.filter((f) => f.workers.includes('request_input'))) expect(folder.config.workflowType, folder.config.name).toBe('STANDARD');
    // tasks-mrtr-composition: the question goes back in the call's own rounds, before the task exists.
    expect(folders.find((f) => f.config.name === 'test_tool_with_task')!.config.askBeforeTaskSeconds).toBeGreaterThan(0);
  });
});

describe('conformance fixtures that ask for input, run on the local stack', () => {
  let stack: LocalStack;
  beforeAll(async () => {
    stack = await startLocalStack({ toolsDir: TOOLS_DIR, port: 0 });
  });
  afterAll(async () => {
    await stack?.close();
  });

  interface Round {
    /** The questions open at once in this round, by key. */
    asked: Record<string, InputRequestMessage>;
  }

  /**
   * Starts the tool as an operation and answers each round of questions with `answer`
   * (given the open questions and the round's index), until the execution ends. A round
   * starts once `opensAtOnce` questions are open: a Parallel state's branches ask theirs
   * one after another, each through its own worker call.
   */
  async function run(
    tool: string,
    args: Record<string, unknown>,
    answer: (asked: Record<string, InputRequestMessage>, round: number) => Record<string, InputAnswer>,
    clientCapabilities: Record<string, unknown> = ALL_INPUT_KINDS,
    opensAtOnce = 1,
  ): Promise<{ rounds: Round[]; outcome: Outcome }> {
    const operations = stack.app.operations;
    const spec = stack.catalog.get(tool)!;
    let record = await operations.start({
      ownerId: ownerIdFor('local'),
      tool: spec,
      arguments: args,
      token: operations.mintToken(),
      dialect: 'tasks-2026-07-28',
      clientCapabilities,
    });
    const rounds: Round[] = [];
    for (;;) {
      const wanted = rounds.length === 0 ? opensAtOnce : 1;
      record = await operations.waitFor(record, 10_000, (r) => Object.keys(operations.inputs.pending(r)).length >= wanted);
      if (isTerminal(record.status)) break;
      const asked = operations.inputs.pending(record);
      expect(Object.keys(asked).length, `${tool} is waiting on a question`).toBeGreaterThan(0);
      rounds.push({ asked });
      const { resumed } = await operations.inputs.answer(record, answer(asked, rounds.length - 1));
      expect(resumed.length, `${tool} took an answer`).toBeGreaterThan(0);
    }
    return { rounds, outcome: record.outcome! };
  }

  /** The text of a finished run's CallToolResult. */
  function textOf(outcome: Outcome): string {
    // Finished results are stored as the CallToolResult the client reads (shaped at completion).
    expect(outcome.kind).toBe('call-tool-result');
    return (outcome as unknown as { result: { content: Array<{ text: string }> } }).result.content[0]!.text;
  }

  it('test_input_required_result_elicitation asks "What is your name?" under user_name and answers "Hello, Alice!"', async () => {
    const { rounds, outcome } = await run('test_input_required_result_elicitation', {}, () => ({ user_name: accept({ name: 'Alice' }) }));
    expect(rounds).toEqual([
      {
        asked: {
          user_name: {
            method: 'elicitation/create',
            params: { message: 'What is your name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] } },
          },
        },
      },
    ]);
    expect(textOf(outcome)).toBe('Hello, Alice!');
  });

  it('test_input_required_result_sampling asks the model under capital_question and returns its text', async () => {
    const { rounds, outcome } = await run('test_input_required_result_sampling', {}, () => ({ capital_question: sampled('The capital of France is Paris.') }));
    expect(rounds.map((r) => Object.entries(r.asked).map(([key, q]) => [key, q.method]))).toEqual([[['capital_question', 'sampling/createMessage']]]);
    expect(textOf(outcome)).toBe('The capital of France is Paris.');
  });

  it('test_input_required_result_list_roots asks roots/list under client_roots and names the roots it got', async () => {
    const { rounds, outcome } = await run('test_input_required_result_list_roots', {}, () => ({ client_roots: ROOTS }));
    expect(rounds).toEqual([{ asked: { client_roots: { method: 'roots/list', params: {} } } }]);
    expect(textOf(outcome)).toBe('Client roots (1): Test Root <file:///test/root>');
  });

  it('test_input_required_result_capabilities asks only what the client declared: sampling alone when only sampling is declared', async () => {
    const { rounds, outcome } = await run('test_input_required_result_capabilities', {}, () => ({ greeting: sampled('Hi there.') }), { sampling: {} });
    expect(rounds.map((r) => Object.keys(r.asked))).toEqual([['greeting']]);
    expect(rounds[0]!.asked.greeting!.method).toBe('sampling/createMessage');
    expect(textOf(outcome)).toBe('elicitation: not declared, not asked; sampling: Hi there.; roots: not declared, not asked');
  });

  it('test_input_required_result_capabilities asks nothing of a client that declared no input kind', async () => {
    const { rounds, outcome } = await run('test_input_required_result_capabilities', {}, () => ({}), {});
    expect(rounds).toEqual([]);
    expect(textOf(outcome)).toBe('elicitation: not declared, not asked; sampling: not declared, not asked; roots: not declared, not asked');
  });

  it('test_input_required_result_multiple_inputs has an elicitation, a sampling request and roots/list open at once', async () => {
    const { rounds, outcome } = await run(
      'test_input_required_result_multiple_inputs',
      {},
      (asked) => {
        // All three are open before any is answered (a Parallel state asks them together).
        expect(Object.keys(asked).sort()).toEqual(['client_roots', 'greeting', 'user_name']);
        return { user_name: accept({ name: 'Alice' }), greeting: sampled('Hello there!'), client_roots: ROOTS };
      },
      ALL_INPUT_KINDS,
      3,
    );
    expect(rounds).toHaveLength(1);
    expect(Object.fromEntries(Object.entries(rounds[0]!.asked).map(([key, q]) => [key, q.method]))).toEqual({
      user_name: 'elicitation/create',
      greeting: 'sampling/createMessage',
      client_roots: 'roots/list',
    });
    expect(textOf(outcome)).toBe('Hello, Alice! Your model says: Hello there! (the client has 1 root)');
  });

  it('test_input_required_result_request_state asks "Please confirm" under confirm and says state-ok once resumed', async () => {
    const { rounds, outcome } = await run('test_input_required_result_request_state', {}, () => ({ confirm: accept({ ok: true }) }));
    expect(rounds[0]!.asked.confirm).toMatchObject({ method: 'elicitation/create', params: { message: 'Please confirm' } });
    expect(textOf(outcome)).toContain('state-ok');
  });

  it('test_input_required_result_multi_round asks step1, then step2 once step1 is answered, then reports both', async () => {
    const answers: Record<string, InputAnswer>[] = [{ step1: accept({ name: 'Alice' }) }, { step2: accept({ color: 'blue' }) }];
    const { rounds, outcome } = await run('test_input_required_result_multi_round', {}, (_asked, round) => answers[round]!);
    expect(rounds.map((r) => Object.keys(r.asked))).toEqual([['step1'], ['step2']]);
    expect(rounds[1]!.asked.step2!.params).toMatchObject({ message: 'Step 2: What is your favorite color?' });
    expect(textOf(outcome)).toBe('Alice likes blue.');
  });

  it('test_input_required_result_tampered_state asks under confirm and reports the answer', async () => {
    const { rounds, outcome } = await run('test_input_required_result_tampered_state', {}, () => ({ confirm: accept({ ok: true }) }));
    expect(Object.keys(rounds[0]!.asked)).toEqual(['confirm']);
    expect(textOf(outcome)).toBe('confirmed: {"ok":true}');
  });

  it('confirm_delete asks once under a server-minted key, and deletes only when confirmed', async () => {
    const confirmed = await run('confirm_delete', { filename: 'rt.txt' }, (asked) =>
      Object.fromEntries(Object.keys(asked).map((key) => [key, accept({ confirm: true })])),
    );
    const [key] = Object.keys(confirmed.rounds[0]!.asked);
    expect(key).toMatch(/^input-[A-Za-z0-9_-]{22}$/);
    expect(confirmed.rounds[0]!.asked[key!]!.params).toMatchObject({ message: 'Delete rt.txt? This cannot be undone.' });
    expect(confirmed.outcome).toMatchObject({ kind: 'call-tool-result', result: { structuredContent: { filename: 'rt.txt', deleted: true } } });
    const declined = await run('confirm_delete', { filename: 'rt.txt' }, (asked) =>
      Object.fromEntries(Object.keys(asked).map((k) => [k, { result: { action: 'decline' } }])),
    );
    expect(declined.outcome).toMatchObject({ kind: 'call-tool-result', result: { structuredContent: { filename: 'rt.txt', deleted: false } } });
  });

  it('multi_input has two questions open at once under minted keys; answering one leaves the other open', async () => {
    const { rounds, outcome } = await run(
      'multi_input',
      {},
      (asked, round) => {
        const [first] = Object.keys(asked);
        return { [first!]: accept({ name: `partial-${round + 1}`, confirm: true }) };
      },
      ALL_INPUT_KINDS,
      2,
    );
    expect(Object.keys(rounds[0]!.asked)).toHaveLength(2);
    expect(Object.keys(rounds[1]!.asked)).toHaveLength(1);
    expect(Object.keys(rounds[0]!.asked)).toContain(Object.keys(rounds[1]!.asked)[0]);
    expect(textOf(outcome)).toMatch(/^first: \{"name":"partial-[12]","confirm":true\}, second: \{"name":"partial-[12]","confirm":true\}$/);
  });

  it('test_tool_with_task asks under user_name and its result names the user', async () => {
    const { rounds, outcome } = await run('test_tool_with_task', {}, () => ({ user_name: accept({ name: 'Alice' }) }));
    expect(Object.keys(rounds[0]!.asked)).toEqual(['user_name']);
    expect(textOf(outcome)).toContain('Alice');
  });

  it("test_elicitation shows the caller's message with the username and email schema, and reports the action and content", async () => {
    const content = { username: 'testuser', email: 'test@example.com' };
    const { rounds, outcome } = await run('test_elicitation', { message: 'Please provide your information' }, () => ({ user_info: accept(content) }));
    expect(rounds[0]!.asked.user_info!.params).toEqual({
      message: 'Please provide your information',
      requestedSchema: {
        type: 'object',
        properties: { username: { type: 'string', description: "User's response" }, email: { type: 'string', description: "User's email address" } },
        required: ['username', 'email'],
      },
    });
    expect(textOf(outcome)).toBe(`User response: action=accept, content=${JSON.stringify(content)}`);
    const declined = await run('test_elicitation', { message: 'm' }, () => ({ user_info: { result: { action: 'decline' } } }));
    expect(textOf(declined.outcome)).toBe('User response: action=decline, content={}');
  });

  it('test_elicitation is a tool error for a client that did not declare elicitation (Mcp.CapabilityMissing)', async () => {
    const { rounds, outcome } = await run('test_elicitation', { message: 'm' }, () => ({}), { sampling: {} });
    expect(rounds).toEqual([]);
    expect(outcome).toMatchObject({ kind: 'tool-error', error: 'Mcp.CapabilityMissing' });
  });

  it('test_sampling sends the prompt with maxTokens 100 and returns "LLM response: <text>"', async () => {
    const { rounds, outcome } = await run('test_sampling', { prompt: 'Test prompt for sampling' }, () => ({
      llm_response: sampled('This is a test response from the client'),
    }));
    expect(rounds[0]!.asked.llm_response).toEqual({
      method: 'sampling/createMessage',
      params: { messages: [{ role: 'user', content: { type: 'text', text: 'Test prompt for sampling' } }], maxTokens: 100 },
    });
    expect(textOf(outcome)).toBe('LLM response: This is a test response from the client');
  });

  it('test_elicitation_sep1034_defaults gives every primitive field its SEP-1034 default', async () => {
    const content = { name: 'Jane Smith', age: 25, score: 88, status: 'inactive', verified: false };
    const { rounds, outcome } = await run('test_elicitation_sep1034_defaults', {}, () => ({ profile: accept(content) }));
    const properties = (rounds[0]!.asked.profile!.params.requestedSchema as { properties: Record<string, Record<string, unknown>> }).properties;
    expect(properties).toMatchObject({
      name: { type: 'string', default: 'John Doe' },
      age: { type: 'integer', default: 30 },
      score: { type: 'number', default: 95.5 },
      status: { type: 'string', enum: ['active', 'inactive', 'pending'], default: 'active' },
      verified: { type: 'boolean', default: true },
    });
    expect(textOf(outcome)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify(content)}`);
  });

  it('test_elicitation_sep1330_enums asks with the five SEP-1330 enum shapes', async () => {
    const content = {
      untitledSingle: 'option1',
      titledSingle: 'value1',
      legacyEnum: 'opt1',
      untitledMulti: ['option1', 'option2'],
      titledMulti: ['value1', 'value2'],
    };
    const { rounds, outcome } = await run('test_elicitation_sep1330_enums', {}, () => ({ choices: accept(content) }));
    const properties = (
      rounds[0]!.asked.choices!.params.requestedSchema as { properties: Record<string, Record<string, unknown> & { items: Record<string, unknown> }> }
    ).properties;
    expect(properties.untitledSingle).toMatchObject({ type: 'string', enum: ['option1', 'option2', 'option3'] });
    expect(properties.untitledSingle!.oneOf).toBeUndefined();
    expect(properties.titledSingle!.oneOf).toEqual([
      { const: 'value1', title: 'First Option' },
      { const: 'value2', title: 'Second Option' },
      { const: 'value3', title: 'Third Option' },
    ]);
    expect(properties.titledSingle!.enum).toBeUndefined();
    expect(properties.legacyEnum).toMatchObject({ enum: ['opt1', 'opt2', 'opt3'], enumNames: ['Option One', 'Option Two', 'Option Three'] });
    expect(properties.untitledMulti).toMatchObject({ type: 'array', items: { type: 'string', enum: ['option1', 'option2', 'option3'] } });
    expect(properties.titledMulti!.items.anyOf).toHaveLength(3);
    expect(properties.titledMulti!.items.enum).toBeUndefined();
    expect(textOf(outcome)).toBe(`Elicitation completed: action=accept, content=${JSON.stringify(content)}`);
  });
});
