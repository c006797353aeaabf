/**
 * checkAnswer holds an accepted answer to its question's requestedSchema, the way the
 * elicitation spec shapes one (a flat object of strings, numbers, booleans and enums), and
 * names the failing field.
 */
import { describe, expect, it } from 'vitest';
import { checkAnswer, InvalidAnswerError, type Answer, type Question } from '../../client/index.ts';

const QUESTION: Question = {
  key: 'profile',
  message: 'Tell us about you',
  requestedSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', minLength: 2, maxLength: 20 },
      age: { type: 'integer', minimum: 0, maximum: 150 },
      email: { type: 'string', format: 'email' },
      site: { type: 'string', format: 'uri' },
      born: { type: 'string', format: 'date' },
      seen: { type: 'string', format: 'date-time' },
      color: { type: 'string', enum: ['red', 'blue'] },
      size: {
        type: 'string',
        oneOf: [
          { const: 's', title: 'Small' },
          { const: 'l', title: 'Large' },
        ],
      },
      tags: { type: 'array', items: { type: 'string', enum: ['a', 'b'] }, maxItems: 2 },
      subscribe: { type: 'boolean' },
    },
    required: ['name'],
  },
};

function failure(answer: Answer): InvalidAnswerError {
  try {
    checkAnswer(QUESTION, answer);
  } catch (error) {
    if (error instanceof InvalidAnswerError) return error;
    throw error;
  }
  throw new Error('checkAnswer accepted it');
}

const accept = (content: Record<string, unknown>): Answer => ({ action: 'accept', content });

describe('checkAnswer', () => {
  it('lets a fitting accept, a decline and a cancel through', () => {
    const full = {
      name: 'Ada',
      age: 36,
      email: 'ada@example.com',
      site: 'https://example.com/ada',
      born: '1815-12-10',
      seen: '2026-01-02T03:04:05Z',
      color: 'red',
      size: 'l',
      tags: ['a', 'b'],
      subscribe: true,
    };
    expect(() => checkAnswer(QUESTION, accept(full))).not.toThrow();
    expect(() => checkAnswer(QUESTION, { action: 'decline' })).not.toThrow();
    expect(() => checkAnswer(QUESTION, { action: 'cancel' })).not.toThrow();
  });

  it.each([
    ['a missing required field', {}, 'name', /required/],
    ['a string too short', { name: 'A' }, 'name', /too short/],
    ['a wrong type', { name: 'Ada', age: 'old' }, 'age', /integer/],
    ['a number past its maximum', { name: 'Ada', age: 200 }, 'age', /greater than 150/],
    ['a malformed email', { name: 'Ada', email: 'nope' }, 'email', /email/],
    ['a malformed uri', { name: 'Ada', site: 'not a uri' }, 'site', /uri/],
    ['a malformed date', { name: 'Ada', born: '1815-13-45' }, 'born', /date/],
    ['a malformed date-time', { name: 'Ada', seen: 'yesterday' }, 'seen', /date-time/],
    ['a value outside the enum', { name: 'Ada', color: 'green' }, 'color', /red/],
    ['a value outside a titled enum', { name: 'Ada', size: 'm' }, 'size', /./],
    ['a multi-select value outside its choices', { name: 'Ada', tags: ['a', 'c'] }, 'tags', /./],
    ['a boolean given as a string', { name: 'Ada', subscribe: 'yes' }, 'subscribe', /boolean/],
  ])('names the field for %s', (_case, content, field, reason) => {
    const error = failure(accept(content));
    expect(error).toMatchObject({ name: 'InvalidAnswerError', field, question: 'profile' });
    expect(error.message).toContain(`"${field}"`);
    expect(error.message).toMatch(reason);
  });

  it('refuses content that is not an object, and an unknown action, naming no field', () => {
    expect(failure({ action: 'accept', content: 'yes' } as unknown as Answer)).toMatchObject({ field: undefined });
    expect(failure({ action: 'maybe' } as unknown as Answer).message).toMatch(/accept, decline or cancel/);
  });
});
