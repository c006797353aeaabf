import { describe, expect, it } from 'vitest';
import { statusChangePattern } from '../../lambdas/aws/status-events.ts';
import { checkEventPattern, matchesEventPattern, type EventPattern } from '../../local/events/event-pattern.ts';

const TOOL = 'arn:aws:states:us-east-1:000000000000:stateMachine:tool';
const OTHER = 'arn:aws:states:us-east-1:000000000000:stateMachine:other';

function statusEvent(status: string, stateMachineArn = TOOL, overrides: Record<string, unknown> = {}) {
  return {
    version: '0',
    source: 'aws.states',
    'detail-type': 'Step Functions Execution Status Change',
    detail: { executionArn: `${stateMachineArn.replace(':stateMachine:', ':execution:')}:run`, stateMachineArn, status, error: null },
    ...overrides,
  };
}

describe('EventBridge pattern matching (exact values)', () => {
  const pattern = statusChangePattern([TOOL]) as unknown as EventPattern;

  it('the AWS rule pattern selects RUNNING and every terminal status of its state machines', () => {
    for (const status of ['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']) {
      expect(matchesEventPattern(pattern, statusEvent(status)), status).toBe(true);
    }
  });

  it('the AWS rule pattern leaves out PENDING_REDRIVE, other state machines, other sources and other detail types', () => {
    expect(matchesEventPattern(pattern, statusEvent('PENDING_REDRIVE'))).toBe(false);
    expect(matchesEventPattern(pattern, statusEvent('SUCCEEDED', OTHER))).toBe(false);
    expect(matchesEventPattern(pattern, statusEvent('SUCCEEDED', TOOL, { source: 'my.app' }))).toBe(false);
    expect(matchesEventPattern(pattern, statusEvent('SUCCEEDED', TOOL, { 'detail-type': 'Step Functions State Machine Status Change' }))).toBe(false);
  });

  it('a field the pattern names must be present: a missing field matches nothing, not even null', () => {
    expect(matchesEventPattern({ detail: { error: [null] } }, statusEvent('FAILED'))).toBe(true);
    expect(matchesEventPattern({ detail: { cause: [null] } }, statusEvent('FAILED'))).toBe(false);
    expect(matchesEventPattern({ detail: { status: ['RUNNING'] } }, { detail: 'RUNNING' })).toBe(false);
    expect(matchesEventPattern({ source: ['aws.states'] }, null)).toBe(false);
  });

  it('an array value in the event matches when it shares a value with the pattern; fields the pattern leaves out match anything', () => {
    const event = { resources: ['arn:a', 'arn:b'], detail: { count: 3, ok: true }, extra: { anything: 1 } };
    expect(matchesEventPattern({ resources: ['arn:b', 'arn:c'] }, event)).toBe(true);
    expect(matchesEventPattern({ resources: ['arn:c'] }, event)).toBe(false);
    expect(matchesEventPattern({ detail: { count: [3], ok: [true] } }, event)).toBe(true);
    expect(matchesEventPattern({ detail: { count: ['3'] } }, event)).toBe(false);
    expect(matchesEventPattern({}, event)).toBe(true);
  });

  it('matches a prefix filter against string values that start with it, as the deployed rule names every tool machine', () => {
    const byPrefix = { detail: { stateMachineArn: [{ prefix: 'arn:aws:states:us-east-1:000000000000:stateMachine:to' }] } };
    expect(() => checkEventPattern(byPrefix)).not.toThrow();
    expect(matchesEventPattern(byPrefix, statusEvent('RUNNING', TOOL))).toBe(true);
    expect(matchesEventPattern(byPrefix, statusEvent('RUNNING', OTHER))).toBe(false);
    expect(matchesEventPattern({ detail: { count: [{ prefix: '3' }] } }, { detail: { count: 3 } })).toBe(false);
  });

  it('refuses patterns it cannot apply as EventBridge would: other content filters, empty arrays, bare values', () => {
    expect(() => checkEventPattern(pattern)).not.toThrow();
    expect(() => checkEventPattern({ detail: { status: [{ 'anything-but': ['RUNNING'] }] } })).toThrow(/detail\.status uses a content filter/);
    expect(() => checkEventPattern({ source: [] })).toThrow(/source is an empty array/);
    expect(() => checkEventPattern({ source: 'aws.states' })).toThrow(/source must be an array of values or an object/);
    expect(() => checkEventPattern(['aws.states'])).toThrow(/must be an object/);
  });
});
