/**
 * How the terminal asks a question's fields: each as its type suggests (text, number, yes/no,
 * a numbered choice for an enum), the default shown, required fields required; and the whole
 * prompt, fed keystrokes through a stream.
 */
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { Question } from '../../client/questions.ts';
import { readField, renderField } from '../../client/terminal-field.ts';
import { askOnTerminal } from '../../client/terminal-prompt.ts';

describe('renderField: one field as the terminal asks it', () => {
  it.each<[string, Record<string, unknown>, boolean, string[]]>([
    ['text, optional', { type: 'string', title: 'Comment', maxLength: 500 }, false, ['Comment (text up to 500 characters, optional): ']],
    ['text with a format', { type: 'string', format: 'email' }, true, ['email (text, email): ']],
    ['a whole number with a range and a default', { type: 'integer', minimum: 1, maximum: 9, default: 3 }, true, ['count (a whole number from 1 to 9) [3]: ']],
    ['a number', { type: 'number', title: 'Ratio' }, false, ['Ratio (a number, optional): ']],
    ['yes/no with a default', { type: 'boolean', title: 'Ship it?', default: true }, true, ['Ship it? (y/n) [y]: ']],
    [
      'a choice (enum with enumNames), the default shown by its name',
      { type: 'string', title: 'Region', enum: ['eu', 'us'], enumNames: ['Europe', 'America'], default: 'us' },
      true,
      ['    1) Europe', '    2) America', 'Region (1-2) [America]: '],
    ],
    [
      'a choice (oneOf of const and title), with a description',
      {
        type: 'string',
        description: 'Where to go',
        oneOf: [
          { const: 'a', title: 'Alpha' },
          { const: 'b', title: 'Beta' },
        ],
      },
      false,
      ['  Where to go', '    1) Alpha', '    2) Beta', 'count (1-2, optional): '],
    ],
    [
      'several choices (an array of enum items)',
      { type: 'array', title: 'Tags', items: { type: 'string', enum: ['x', 'y', 'z'] } },
      false,
      ['    1) x', '    2) y', '    3) z', 'Tags (numbers 1-3, comma-separated, optional): '],
    ],
  ])('%s', (_name, schema, required, lines) => {
    const name = typeof schema.format === 'string' ? 'email' : 'count';
    expect(renderField(name, schema, required)).toEqual(lines);
  });
});

describe('readField: what was typed, as the field’s value', () => {
  it.each<[string, Record<string, unknown>, boolean, string, unknown]>([
    ['text as typed', { type: 'string' }, true, 'ship it', { value: 'ship it' }],
    ['empty optional text is left out', { type: 'string' }, false, '', { skip: true }],
    ['empty required text is asked again', { type: 'string' }, true, '  ', { error: 'required' }],
    ['empty takes the default', { type: 'integer', default: 3 }, true, '', { value: 3 }],
    ['a number', { type: 'number' }, true, '2.5', { value: 2.5 }],
    ['not a whole number', { type: 'integer' }, true, '2.5', { error: 'not a whole number' }],
    ['not a number', { type: 'number' }, true, 'many', { error: 'not a number' }],
    ['yes', { type: 'boolean' }, true, 'Y', { value: true }],
    ['no', { type: 'boolean' }, true, 'no', { value: false }],
    ['neither yes nor no', { type: 'boolean' }, true, 'maybe', { error: 'answer y or n' }],
    ['a choice by number', { type: 'string', enum: ['eu', 'us'] }, true, '2', { value: 'us' }],
    ['a choice by value', { type: 'string', enum: ['eu', 'us'] }, true, 'eu', { value: 'eu' }],
    ['a choice out of range', { type: 'string', enum: ['eu', 'us'] }, true, '3', { error: 'pick 1-2' }],
    ['several choices', { type: 'array', items: { enum: ['x', 'y', 'z'] } }, true, '1, 3', { value: ['x', 'z'] }],
  ])('%s', (_name, schema, required, typed, expected) => {
    expect(readField(schema, required, typed)).toEqual(expected);
  });
});

describe('askOnTerminal', () => {
  const question: Question = {
    key: 'approval',
    message: 'Deploy 2 changes to staging?',
    requestedSchema: {
      type: 'object',
      properties: {
        comment: { type: 'string', title: 'Comment', maxLength: 5 },
        replicas: { type: 'integer', title: 'Replicas', minimum: 1, default: 2 },
        notify: { type: 'boolean', title: 'Notify?' },
      },
      required: ['notify'],
    },
  };

  async function answerWith(lines: string[]) {
    const input = new PassThrough();
    const output = new PassThrough();
    let shown = '';
    output.on('data', (chunk: Buffer) => {
      shown += chunk.toString();
    });
    const answered = askOnTerminal(question, { input, output });
    // One line at a time, each once the prompt before it has been read.
    for (const line of lines) {
      await new Promise((resolve) => setTimeout(resolve, 5));
      input.write(`${line}\n`);
    }
    return { answer: await answered, shown };
  }

  it('asks the message, then each field (asking again what does not fit), then accept, decline or cancel', async () => {
    const { answer, shown } = await answerWith(['far too long', 'ok', '0', '', 'maybe', 'y', 'a']);
    expect(answer).toEqual({ action: 'accept', content: { comment: 'ok', replicas: 2, notify: true } });
    expect(shown).toContain('Deploy 2 changes to staging?');
    expect(shown).toContain('Comment (text up to 5 characters, optional): ');
    expect(shown).toMatch(/"comment".*5/);
    expect(shown).toContain('Replicas (a whole number at least 1, optional) [2]: ');
    expect(shown).toContain('answer y or n');
    expect(shown).toContain('[a]ccept, [d]ecline or [c]ancel? [a]: ');
  });

  it('decline sends no content', async () => {
    const { answer } = await answerWith(['', '', 'n', 'd']);
    expect(answer).toEqual({ action: 'decline' });
  });
});
