/**
 * The CLI's side of a tool's questions beyond the prompt: where a command's answers come
 * from, `answer <id>`, and the report of a question nothing answered (exit 4: the call waits).
 */
import type { AuthOptions } from './auth.ts';
import { answer, questions, status } from './async-client.ts';
import type { CallStatus } from './call-handle.ts';
import { type ScriptedAnswer, ScriptedAnswers } from './cli-answers.ts';
import { EXIT } from './cli-args.ts';
import { cliCommand } from './cli-command.ts';
import { answerCommand, answerFor, type CliAnswering, describeOpenQuestions, QuestionLeftOpenError } from './cli-questions.ts';
import type { ProgressLine } from './progress-line.ts';
import { InvalidAnswerError, type Question } from './questions.ts';
import type { RequestStateStore } from './stores/request-state-store.ts';

/** What these commands need of the CLI: its streams, --json, the store and credentials, and what Ctrl-C at a prompt does. */
export interface QuestionContext {
  io: { stdout: NodeJS.WritableStream; stderr: NodeJS.WriteStream; stdin?: NodeJS.ReadStream };
  json: boolean;
  store: RequestStateStore;
  auth: AuthOptions;
  onInterrupt: () => void;
}

function printJson(context: QuestionContext, value: unknown): void {
  context.io.stdout.write(`${JSON.stringify(value)}\n`);
}

/** `answer <id>`: answers each open question (by --answer, else on the terminal); exit 4 when one is left open. */
export async function answerOpen(id: string, answers: readonly ScriptedAnswer[], context: QuestionContext): Promise<number> {
  const { store, auth } = context;
  const open = await questions(id, { store, auth });
  if (open.length === 0) {
    const current = await status(id, { store, auth });
    const message = `${id} has no open question (it is ${current.state})`;
    if (context.json) printJson(context, { ...current, error: { message } });
    else context.io.stderr.write(`async-mcp: ${message}\n`);
    return EXIT.FAILED;
  }
  const using = answering(answers, context);
  const left: Question[] = [];
  let after: CallStatus | undefined;
  for (const question of open) {
    const given = await answerFor(question, using);
    if (!given) {
      left.push(question);
      continue;
    }
    try {
      after = await answer(id, given, { store, auth, key: question.key });
    } catch (error) {
      if (error instanceof InvalidAnswerError) return leftOpen(id, error, context, open);
      throw error;
    }
  }
  if (left.length > 0) return leftOpen(id, undefined, context, left);
  if (context.json) printJson(context, after);
  else context.io.stdout.write(`Answered; ${id} is ${after?.state ?? 'working'}. Join it with: ${cliCommand()} join ${id}\n`);
  return EXIT.OK;
}

/** Where answers come from: the --answer list, then the terminal when stdin and stderr are one. */
export function answering(answers: readonly ScriptedAnswer[], context: QuestionContext, line?: ProgressLine): CliAnswering {
  const stdin = context.io.stdin ?? process.stdin;
  const onTerminal = stdin.isTTY === true && context.io.stderr.isTTY === true;
  return {
    answers: new ScriptedAnswers(answers),
    ...(onTerminal
      ? {
          terminal: {
            input: stdin,
            output: context.io.stderr,
            onInterrupt: context.onInterrupt,
            beforePrompt: () => line?.pause(),
            afterPrompt: () => line?.resume(),
          },
        }
      : {}),
  };
}

/**
 * The call waits for an answer nothing gave: print its open questions and the command that
 * answers them (the message to stderr; with --json, the last line holds the id and questions).
 */
export async function leftOpen(
  id: string,
  cause: QuestionLeftOpenError | InvalidAnswerError | undefined,
  context: QuestionContext,
  known?: Question[],
): Promise<number> {
  const { store, auth } = context;
  // Every open question, not only the one the handler met; the one met if that read fails.
  let open: Question[] = known ?? (await questions(id, { store, auth }).catch((): Question[] => []));
  if (open.length === 0 && cause instanceof QuestionLeftOpenError) open = [cause.question];
  if (cause instanceof InvalidAnswerError) context.io.stderr.write(`async-mcp: ${cause.message}\n`);
  const command = cliCommand();
  context.io.stderr.write(describeOpenQuestions(command, id, open));
  if (context.json)
    printJson(context, {
      id,
      state: 'input_required',
      questions: open,
      answerWith: answerCommand(command, id, open),
      ...(cause instanceof InvalidAnswerError ? { error: { message: cause.message, ...(cause.field ? { field: cause.field } : {}) } } : {}),
    });
  return EXIT.QUESTION_OPEN;
}
