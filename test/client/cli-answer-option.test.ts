/** `--answer [KEY=]VALUE`: parsed without running anything, and handed to the questions it is meant for. */
import { describe, expect, it } from 'vitest';
import { parseAnswerOption, ScriptedAnswers } from '../../client/cli-answers.ts';
import { parseCli, UsageError } from '../../client/cli-args.ts';

const accept = (content: Record<string, unknown>) => ({ action: 'accept', content });

describe('--answer [KEY=]VALUE', () => {
  it.each<[string, unknown]>([
    ['{"comment":"ship it"}', { answer: accept({ comment: 'ship it' }) }],
    ['decline', { answer: { action: 'decline' } }],
    ['cancel', { answer: { action: 'cancel' } }],
    ['approval={"comment":"ok"}', { key: 'approval', answer: accept({ comment: 'ok' }) }],
    ['approval=decline', { key: 'approval', answer: { action: 'decline' } }],
    ['{"note":"a=b"}', { answer: accept({ note: 'a=b' }) }],
    ['k={"note":"x=y"}', { key: 'k', answer: accept({ note: 'x=y' }) }],
    ['{}', { answer: accept({}) }],
  ])('%s', (text, expected) => {
    expect(parseAnswerOption(text)).toEqual({ ok: true, answer: expected });
  });

  it.each(['yes', '[1]', '"text"', '42', 'approval=maybe', 'approval=[true]', '{"broken"'])('refuses %s, saying what VALUE may be', (text) => {
    const parsed = parseAnswerOption(text);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.message).toMatch(/--answer .*(JSON object|decline)/);
  });

  it('call, join and answer take it, repeated; a bad one is a usage error', () => {
    const call = parseCli(['call', 'http://h/mcp', 't', '--answer', 'a={"x":1}', '--answer', 'decline']);
    expect(call.command).toMatchObject({ name: 'call', answers: [{ key: 'a', answer: accept({ x: 1 }) }, { answer: { action: 'decline' } }] });
    expect(parseCli(['join', 'id', '--answer', 'cancel']).command).toEqual({ name: 'join', id: 'id', answers: [{ answer: { action: 'cancel' } }] });
    expect(parseCli(['answer', 'id']).command).toEqual({ name: 'answer', id: 'id', answers: [] });
    expect(() => parseCli(['call', 'http://h/mcp', 't', '--answer', 'maybe'])).toThrow(UsageError);
  });

  it('is refused where nothing could be answered: status, list, and a detached call (answered later with answer <id>)', () => {
    expect(() => parseCli(['status', 'id', '--answer', 'decline'])).toThrow(UsageError);
    expect(() => parseCli(['list', '--answer', 'decline'])).toThrow(UsageError);
    expect(() => parseCli(['call', 'http://h/mcp', 't', '--detach', '--answer', 'decline'])).toThrow(/answer <id>/);
  });
});

describe('which question each --answer answers', () => {
  const parsed = (...texts: string[]) => texts.map((text) => (parseAnswerOption(text) as { ok: true; answer: never }).answer);

  it('a keyed answer goes to its key; unkeyed ones go, in order, to the questions no keyed answer covers', () => {
    const answers = new ScriptedAnswers(parsed('{"n":1}', 'second=decline', '{"n":2}'));
    expect(answers.take({ key: 'first' })).toEqual(accept({ n: 1 }));
    expect(answers.take({ key: 'second' })).toEqual({ action: 'decline' });
    expect(answers.take({ key: 'third' })).toEqual(accept({ n: 2 }));
    expect(answers.take({ key: 'fourth' })).toBeUndefined();
  });

  it('each answer is given once, and a key used up takes no unkeyed answer', () => {
    const answers = new ScriptedAnswers(parsed('approval=cancel', 'decline'));
    expect(answers.take({ key: 'approval' })).toEqual({ action: 'cancel' });
    expect(answers.take({ key: 'approval' })).toBeUndefined();
    expect(answers.take({ key: 'other' })).toEqual({ action: 'decline' });
    expect(answers.size).toBe(0);
  });
});
