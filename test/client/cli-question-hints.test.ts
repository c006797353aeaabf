/** What the CLI prints for a question nothing answered: the command that answers it, quoted for a POSIX shell, with an example answer. */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { answerCommand, describeOpenQuestions, exampleContent, shellQuote } from '../../client/cli-questions.ts';
import type { Question } from '../../client/questions.ts';

const approval: Question = {
  key: 'approval',
  message: 'Deploy 1 change to staging?\n1. api: v2.3.1',
  requestedSchema: { type: 'object', properties: { comment: { type: 'string', description: 'A note.' } } },
};

describe('the answer command the CLI suggests', () => {
  it('shows the optional fields when none is required, and only the required ones otherwise, each as its type or default', () => {
    expect(exampleContent(approval.requestedSchema)).toEqual({ comment: '…' });
    expect(
      exampleContent({
        type: 'object',
        properties: {
          ship: { type: 'boolean' },
          replicas: { type: 'integer', minimum: 2 },
          region: { type: 'string', enum: ['eu', 'us'] },
          note: { type: 'string', default: 'none' },
          extra: { type: 'string' },
        },
        required: ['ship', 'replicas', 'region', 'note'],
      }),
    ).toEqual({ ship: true, replicas: 2, region: 'eu', note: 'none' });
  });

  it('names the key only when more than one question is open', () => {
    expect(answerCommand('npx async-mcp', 'abc', [approval])).toBe(`npx async-mcp answer abc --answer '{"comment":"…"}'`);
    expect(answerCommand('async-mcp', 'abc', [approval, { ...approval, key: 'second' }])).toBe(`async-mcp answer abc --answer approval='{"comment":"…"}'`);
  });

  it('quotes what a shell would split or expand, a single quote included, so the word arrives whole', () => {
    const text = `{"note":"it's $HOME; \`x\` \\"q\\""}`;
    const echoed = execFileSync('sh', ['-c', `printf %s ${shellQuote(text)}`], { encoding: 'utf8' });
    expect(echoed).toBe(text);
  });

  it('prints the message, each field, and how to answer or decline', () => {
    expect(describeOpenQuestions('npm run cli --', 'abc', [approval])).toBe(
      [
        'abc is waiting for an answer:',
        '',
        '  Deploy 1 change to staging?',
        '  1. api: v2.3.1',
        '    comment: string (A note.)',
        '',
        `Answer it with: npm run cli -- answer abc --answer '{"comment":"…"}'`,
        '(or --answer decline, or --answer cancel)',
        '',
      ].join('\n'),
    );
  });
});
