/**
 * The answers a test gives a tool's questions: by the question's key, or from a function, each
 * as accept-with-content (a plain object), `'decline'`, `'cancel'` or a whole `Answer`. A
 * question nothing answers is an error naming it, so the call fails instead of waiting.
 */
import type { Answer, Question } from '../client/index.ts';

/** One answer as a test writes it: the content to accept with, `'decline'`, `'cancel'`, or an `Answer`. */
export type TestAnswer = Record<string, unknown> | 'decline' | 'cancel' | Answer;

/**
 * The answers of one call: by question key (`{ confirm: { ship: true } }`), or a function of the
 * question; a function that returns `undefined` leaves the question unanswered.
 */
export type TestAnswers = Record<string, TestAnswer> | ((question: Question) => TestAnswer | undefined | Promise<TestAnswer | undefined>);

/** A question the test gave no answer for; the call it belongs to is cancelled. */
export class UnansweredQuestionError extends Error {
  /** The question as the tool asked it. */
  readonly question: Question;
  constructor(question: Question) {
    super(
      `The tool asked "${question.key}": ${JSON.stringify(question.message)}, and the test has no answer for it ` +
        `(give one in the call's answers, e.g. answers: { ${JSON.stringify(question.key)}: { ... } }, 'decline' or 'cancel')`,
    );
    this.name = 'UnansweredQuestionError';
    this.question = question;
  }
}

/** The answer `answers` gives `question`; throws UnansweredQuestionError when it gives none. */
export async function answerFor(question: Question, answers: TestAnswers | undefined): Promise<Answer> {
  const given = typeof answers === 'function' ? await answers(question) : answers && Object.hasOwn(answers, question.key) ? answers[question.key] : undefined;
  if (given === undefined) throw new UnansweredQuestionError(question);
  return toAnswer(given);
}

/** A test's answer as the client library takes it. */
export function toAnswer(given: TestAnswer): Answer {
  if (given === 'decline' || given === 'cancel') return { action: given };
  if (isAnswer(given)) return given;
  return { action: 'accept', content: given };
}

/**
 * Whether an object is a whole `Answer` rather than the content to accept with: `{ action:
 * 'accept', content: {...} }`, or `{ action: 'decline' }` / `{ action: 'cancel' }` alone. A form
 * with a field named `action` is content unless it has exactly that shape.
 */
function isAnswer(value: Record<string, unknown>): value is Answer {
  const keys = Object.keys(value);
  if (value.action === 'accept') return keys.length === 2 && typeof value.content === 'object' && value.content !== null && !Array.isArray(value.content);
  return (value.action === 'decline' || value.action === 'cancel') && keys.length === 1;
}
