/**
 * How the CLI meets a tool's question: the `--answer`s given, else the terminal, else it
 * leaves the question open, prints it with the command that answers it, and exits 4.
 */
import type { ScriptedAnswers } from './cli-answers.ts';
import type { QuestionHandler } from './call-handle.ts';
import type { Answer, Question, RequestedSchema } from './questions.ts';
import { askOnTerminal, type TerminalIo } from './terminal-prompt.ts';

/** Thrown by the CLI's handler for a question nothing answers: the call is left waiting for it. */
export class QuestionLeftOpenError extends Error {
  readonly question: Question;
  constructor(question: Question) {
    super(`Nothing answered the question "${question.key}"`);
    this.name = 'QuestionLeftOpenError';
    this.question = question;
  }
}

export interface CliAnswering {
  answers: ScriptedAnswers;
  /** Where to ask what no `--answer` covers; without one, the question is left open. */
  terminal?: TerminalIo & { beforePrompt?: () => void; afterPrompt?: () => void };
}

/** The answer for one question: a scripted one, else the terminal's; undefined when neither has one. */
export async function answerFor(question: Question, answering: CliAnswering): Promise<Answer | undefined> {
  const scripted = answering.answers.take(question);
  if (scripted) return scripted;
  const { terminal } = answering;
  if (!terminal) return undefined;
  terminal.beforePrompt?.();
  try {
    return await askOnTerminal(question, terminal);
  } finally {
    terminal.afterPrompt?.();
  }
}

/** The CLI's QuestionHandler for call and join: it throws QuestionLeftOpenError for a question nothing answers. */
export function cliQuestionHandler(answering: CliAnswering): QuestionHandler {
  return async (question) => {
    const answer = await answerFor(question, answering);
    if (!answer) throw new QuestionLeftOpenError(question);
    return answer;
  };
}

/** The command that answers the open questions of call `id`, with an example answer built from the (first) question's form. */
export function answerCommand(command: string, id: string, questions: readonly Question[]): string {
  const [first] = questions;
  const example = shellQuote(JSON.stringify(first ? exampleContent(first.requestedSchema) : {}));
  const key = questions.length > 1 && first ? `${shellWord(first.key)}=` : '';
  return `${command} answer ${id} --answer ${key}${example}`;
}

/** The open questions as a person reads them, with how to answer each (to stderr). */
export function describeOpenQuestions(command: string, id: string, questions: readonly Question[]): string {
  const body = questions.map((question) => questionLines(question, questions.length > 1));
  const lines = [`${id} is waiting for an answer:`, ...body.flat()];
  lines.push('', `Answer it with: ${answerCommand(command, id, questions)}`, `(or --answer decline, or --answer cancel)`);
  return `${lines.join('\n')}\n`;
}

/** One question as a person reads it: its message and its form's fields. */
export function describeQuestion(question: Question): string {
  return `${questionLines(question, true).join('\n')}\n`;
}

function questionLines(question: Question, withKey: boolean): string[] {
  const lines = ['', ...question.message.split('\n').map((line) => `  ${line}`)];
  const { properties, required = [] } = question.requestedSchema;
  for (const [name, schema] of Object.entries(properties))
    lines.push(`    ${name}: ${String(schema.type ?? 'value')}${required.includes(name) ? ', required' : ''}${schemaNote(schema)}`);
  if (withKey) lines.push(`  (key ${question.key})`);
  return lines;
}

function schemaNote(schema: Record<string, unknown>): string {
  if (Array.isArray(schema.enum)) return ` (one of ${schema.enum.map((v) => JSON.stringify(v)).join(', ')})`;
  return typeof schema.description === 'string' ? ` (${schema.description})` : '';
}

/** A content that shows each field's shape: its default, else a placeholder of its type. */
export function exampleContent(schema: RequestedSchema): Record<string, unknown> {
  const required = new Set(schema.required ?? []);
  const entries = Object.entries(schema.properties);
  // Without required fields, show the optional ones: an empty object teaches nothing.
  const shown = entries.some(([name]) => required.has(name)) ? entries.filter(([name]) => required.has(name)) : entries;
  return Object.fromEntries(shown.map(([name, field]) => [name, exampleValue(field)]));
}

function exampleValue(field: Record<string, unknown>): unknown {
  if (field.default !== undefined) return field.default;
  if (Array.isArray(field.enum) && field.enum.length > 0) return field.enum[0];
  switch (field.type) {
    case 'boolean':
      return true;
    case 'integer':
    case 'number':
      return typeof field.minimum === 'number' ? field.minimum : 0;
    default:
      return '…';
  }
}

/** POSIX shell quoting: one word, whatever it holds. */
export function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}

function shellWord(text: string): string {
  return /^[\w.-]+$/.test(text) ? text : shellQuote(text);
}
