/**
 * Where a durable tool's function is once deployed (issue 38): `<prefix><tool>` within Lambda's
 * 64 characters, cut and hashed when too long or not a valid function name, invoked through
 * its `live` alias.
 */
import { describe, expect, it } from 'vitest';
import {
  DURABLE_FUNCTION_ALIAS,
  DURABLE_FUNCTION_ARN_PREFIX_ENV,
  deployedToolArns,
  MAX_FUNCTION_NAME,
  MAX_FUNCTION_NAME_PREFIX,
  toolDurableFunctionArns,
  toolFunctionName,
} from '../../lambdas/tools/durable-function-names.ts';
import { ToolConfigSchema } from '../../lambdas/tools/tool-config.ts';
import type { ToolFolder } from '../../lambdas/tools/tool-folder.ts';

const PREFIX = 'Stack-Tools-1A2B3C4D-';
/** What Lambda accepts as a function name. */
const FUNCTION_NAME = /^[A-Za-z0-9_-]{1,64}$/;

const folder = (name: string, extra: Partial<ToolFolder> = {}, config: Record<string, unknown> = {}): ToolFolder => ({
  dir: `/tools/${name}`,
  config: ToolConfigSchema.parse({ name, description: 'd', inputSchema: { type: 'object' }, invocation: 'async', ...config }),
  workers: [],
  localDefinitionText: '',
  localProblems: [],
  ...extra,
});

describe('toolFunctionName', () => {
  it('is the prefix and the tool name when they fit', () => {
    expect(toolFunctionName(PREFIX, 'approve_deployment')).toBe('Stack-Tools-1A2B3C4D-approve_deployment');
  });

  it('keeps a long name within 64 characters, and two long names that share their start apart', () => {
    const long = (suffix: string) => toolFunctionName(PREFIX, `${'x'.repeat(100)}${suffix}`);
    expect(long('a')).toHaveLength(MAX_FUNCTION_NAME);
    expect(long('a')).toMatch(FUNCTION_NAME);
    expect(long('a')).not.toBe(long('b'));
    expect(long('a').startsWith(`${PREFIX}xxxx`)).toBe(true);
    // 64 exactly still fits as it is; 65 is cut.
    const fits = 'y'.repeat(MAX_FUNCTION_NAME - PREFIX.length);
    expect(toolFunctionName(PREFIX, fits)).toBe(`${PREFIX}${fits}`);
    expect(toolFunctionName(PREFIX, `${fits}y`)).toHaveLength(MAX_FUNCTION_NAME);
  });

  it('makes a tool name with a dot, which Lambda refuses, a valid name that no other tool gets', () => {
    const dotted = toolFunctionName(PREFIX, 'billing.refund');
    expect(dotted).toMatch(FUNCTION_NAME);
    expect(dotted).not.toBe(toolFunctionName(PREFIX, 'billing_refund'));
    expect(dotted).not.toBe(toolFunctionName(PREFIX, 'billing-refund'));
    expect(dotted.startsWith(`${PREFIX}billing_refund-`)).toBe(true);
  });

  it('refuses a prefix too long to leave room for the tool, or not made of function name characters', () => {
    expect(() => toolFunctionName('p'.repeat(MAX_FUNCTION_NAME_PREFIX + 1), 'tool')).toThrow(/at most 32 characters/);
    expect(toolFunctionName('p'.repeat(MAX_FUNCTION_NAME_PREFIX), 'tool')).toMatch(FUNCTION_NAME);
    expect(() => toolFunctionName('Stack.Tools-', 'tool')).toThrow(/prefix is made of/);
  });
});

describe('toolDurableFunctionArns', () => {
  it("gives the alias ARN the engine invokes, in the prefix's partition, region and account", () => {
    const arnOf = toolDurableFunctionArns(`arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:${PREFIX}`);
    expect(arnOf('approve_deployment')).toBe(`arn:aws-us-gov:lambda:us-gov-west-1:123456789012:function:${PREFIX}approve_deployment:${DURABLE_FUNCTION_ALIAS}`);
    expect(DURABLE_FUNCTION_ALIAS).toBe('live');
    const long = arnOf('z'.repeat(80));
    expect(long.endsWith(':live')).toBe(true);
    expect(long.split(':')[6]).toHaveLength(MAX_FUNCTION_NAME);
  });

  it('refuses a prefix that is not a function ARN prefix, naming the variable', () => {
    for (const prefix of [
      'arn:aws:states:us-east-1:123456789012:stateMachine:Stack-',
      'arn:aws:lambda:us-east-1:123456789012:function:Stack-:live',
      'arn:aws:lambda:us-east-1:1234:function:Stack-',
    ]) {
      expect(() => toolDurableFunctionArns(prefix)).toThrow(DURABLE_FUNCTION_ARN_PREFIX_ENV);
    }
    expect(DURABLE_FUNCTION_ARN_PREFIX_ENV).toBe('TOOL_DURABLE_FUNCTION_ARN_PREFIX');
  });
});

describe('deployedToolArns', () => {
  const machines = 'arn:aws:states:eu-west-1:123456789012:stateMachine:Stack-';
  const functions = 'arn:aws:lambda:eu-west-1:123456789012:function:Stack-';
  const existing = 'arn:aws:states:eu-west-1:123456789012:stateMachine:orders-pipeline';

  it("chooses by the folder: a durable tool's alias, an existing machine's own ARN, else the stack's machine", () => {
    const arnOf = deployedToolArns(machines, functions);
    expect(arnOf('ask', folder('ask', { durable: { file: '/tools/ask/durable.ts' } }))).toBe(`${functions}ask:live`);
    expect(arnOf('orders', folder('orders', {}, { stateMachineArn: existing }))).toBe(existing);
    expect(arnOf('calc', folder('calc', { definitionText: '{}' }))).toBe(`${machines}calc`);
  });

  it('serves state machine tools without the durable prefix, and names the variable when a durable tool needs it', () => {
    const arnOf = deployedToolArns(machines, undefined);
    expect(arnOf('calc', folder('calc', { definitionText: '{}' }))).toBe(`${machines}calc`);
    expect(() => arnOf('ask', folder('ask', { durable: { file: '/tools/ask/durable.ts' } }))).toThrow(
      'TOOL_DURABLE_FUNCTION_ARN_PREFIX is not set, and tool "ask" is a durable function',
    );
  });
});
