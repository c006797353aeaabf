/**
 * Asks a tool's question on the terminal: the message, then each field of its form (see
 * terminal-field.ts), then whether to accept, decline or cancel. It writes to stderr, so
 * stdout keeps only the command's output.
 */
import { createInterface } from 'node:readline/promises';
import { type Answer, checkAnswer, InvalidAnswerError, type Question } from './questions.ts';
import { readField, renderField } from './terminal-field.ts';

export interface TerminalIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** Ctrl-C at a prompt: the terminal sends it to the prompt, not as a signal. */
  onInterrupt?: () => void;
}

/** Asks `question` field by field and resolves with the user's answer, already checked against its schema. */
export async function askOnTerminal(question: Question, io: TerminalIo): Promise<Answer> {
  const prompt = createInterface({ input: io.input, output: io.output, terminal: true });
  if (io.onInterrupt) prompt.on('SIGINT', io.onInterrupt);
  try {
    io.output.write(`\n${question.message}\n`);
    const { properties, required = [] } = question.requestedSchema;
    const content: Record<string, unknown> = {};
    for (const [name, schema] of Object.entries(properties)) {
      const isRequired = required.includes(name);
      const lines = renderField(name, schema, isRequired);
      for (;;) {
        for (const line of lines.slice(0, -1)) io.output.write(`${line}\n`);
        const read = readField(schema, isRequired, await prompt.question(lines.at(-1) ?? `${name}: `));
        if ('skip' in read) break;
        const problem = 'error' in read ? read.error : fieldProblem(question, name, read.value, isRequired);
        if (problem === undefined && 'value' in read) {
          content[name] = read.value;
          break;
        }
        io.output.write(`  ${problem}\n`);
      }
    }
    const answer = await chooseAction(prompt, content);
    checkAnswer(question, answer);
    return answer;
  } finally {
    prompt.close();
  }
}

async function chooseAction(prompt: ReturnType<typeof createInterface>, content: Record<string, unknown>): Promise<Answer> {
  for (;;) {
    const typed = (await prompt.question('[a]ccept, [d]ecline or [c]ancel? [a]: ')).trim().toLowerCase();
    if (typed === '' || typed === 'a' || typed === 'accept') return { action: 'accept', content };
    if (typed === 'd' || typed === 'decline') return { action: 'decline' };
    if (typed === 'c' || typed === 'cancel') return { action: 'cancel' };
  }
}

/** What the question's own schema says about this one value (format, length, range), if anything. */
function fieldProblem(question: Question, name: string, value: unknown, required: boolean): string | undefined {
  const schema = question.requestedSchema.properties[name] ?? {};
  const single: Question = {
    ...question,
    requestedSchema: { type: 'object', properties: { [name]: schema }, ...(required ? { required: [name] } : {}) },
  };
  try {
    checkAnswer(single, { action: 'accept', content: { [name]: value } });
    return undefined;
  } catch (error) {
    if (error instanceof InvalidAnswerError) return error.message;
    throw error;
  }
}
