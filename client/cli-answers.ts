/**
 * The CLI's scripted answers: `--answer [KEY=]VALUE`, VALUE a JSON object to accept with,
 * `decline` or `cancel`. A keyed answer goes to the question with that key; an unkeyed one
 * to the next question no keyed answer covers, in the order the questions come.
 */
import type { Answer, Question } from './questions.ts';

/** One `--answer`: for the question with `key`, or (without) for the next uncovered one. */
export interface ScriptedAnswer {
  key?: string;
  answer: Answer;
}

/** Parses one `--answer` value. */
export function parseAnswerOption(text: string): { ok: true; answer: ScriptedAnswer } | { ok: false; message: string } {
  const value = answerValue(text);
  if (value.ok) return { ok: true, answer: { answer: value.answer } };
  // A JSON object holds `=` of its own: only text before a `{` can be a key.
  const equals = text.indexOf('=');
  if (equals > 0 && !text.slice(0, equals).includes('{')) {
    const keyed = answerValue(text.slice(equals + 1));
    if (keyed.ok) return { ok: true, answer: { key: text.slice(0, equals), answer: keyed.answer } };
    return { ok: false, message: `--answer ${text.slice(0, equals)}=…: ${keyed.message}` };
  }
  return { ok: false, message: `--answer ${value.message}` };
}

function answerValue(text: string): { ok: true; answer: Answer } | { ok: false; message: string } {
  const word = text.trim();
  if (word === 'decline' || word === 'cancel') return { ok: true, answer: { action: word } };
  let content: unknown;
  try {
    content = JSON.parse(word);
  } catch {
    return { ok: false, message: 'takes [KEY=]VALUE, VALUE a JSON object to accept with, decline or cancel' };
  }
  if (typeof content !== 'object' || content === null || Array.isArray(content))
    return { ok: false, message: 'takes a JSON object to accept with (or decline, or cancel), not a JSON array or scalar' };
  return { ok: true, answer: { action: 'accept', content: content as Record<string, unknown> } };
}

/** Hands each question the `--answer` meant for it, each answer once. */
export class ScriptedAnswers {
  private readonly keyed = new Map<string, Answer[]>();
  private readonly unkeyed: Answer[] = [];

  constructor(answers: readonly ScriptedAnswer[]) {
    for (const { key, answer } of answers) {
      if (key === undefined) this.unkeyed.push(answer);
      else this.keyed.set(key, [...(this.keyed.get(key) ?? []), answer]);
    }
  }

  /** The answer for `question`, taken so that it is not given twice; undefined when none is left for it. */
  take(question: Pick<Question, 'key'>): Answer | undefined {
    const forKey = this.keyed.get(question.key);
    if (forKey !== undefined) {
      // A key given on the command line is that question's alone, even once its answers are used up.
      return forKey.shift();
    }
    return this.unkeyed.shift();
  }

  get size(): number {
    return this.unkeyed.length + [...this.keyed.values()].reduce((sum, answers) => sum + answers.length, 0);
  }
}
