/** The `async-mcp` commands: each parses nothing and prints in one place, and returns its exit code. */
import type { AuthOptions } from './auth.ts';
import { cancel, join, list, listTools, startToolCall, status } from './async-client.ts';
import { CallCancelledError, CallFailedError, type CallHandle, type CallStatus, type CallToolResult } from './call-handle.ts';
import { answering, answerOpen, leftOpen, type QuestionContext } from './cli-answer-open.ts';
import type { ScriptedAnswer } from './cli-answers.ts';
import { EXIT, parseCli, UsageError, usage, type Command, type ParsedCli } from './cli-args.ts';
import { cliCommand } from './cli-command.ts';
import { type CliAnswering, cliQuestionHandler, describeOpenQuestions, describeQuestion, QuestionLeftOpenError } from './cli-questions.ts';
import { currentLogin, LoginRequiredError } from './login/login-fetch.ts';
import { login, logout } from './login/login-flow.ts';
import { openBrowser } from './login/open-browser.ts';
import { McpRpcError } from './mcp-connection.ts';
import { startProgressLine, type ProgressLine } from './progress-line.ts';
import { FileRequestStateStore } from './stores/file-request-state-store.ts';
import { FileLoginStore } from './stores/login-store.ts';
import { InvalidAnswerError } from './questions.ts';

export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  /** Where a terminal user types answers to a tool's questions. @default process.stdin */
  stdin?: NodeJS.ReadStream;
}

interface Context {
  cli: ParsedCli;
  io: CliIo;
  store: FileRequestStateStore;
  logins: FileLoginStore;
  auth: AuthOptions;
  /** The call in flight, for the Ctrl-C hint. */
  current?: CallHandle;
}

/** Runs one command line; resolves with the process exit code. */
export async function runCli(argv: string[], io: CliIo = { stdout: process.stdout, stderr: process.stderr }): Promise<number> {
  let cli: ParsedCli;
  try {
    cli = parseCli(argv);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.stderr.write(`async-mcp: ${error.message}\n\n${usage()}\n`);
    return EXIT.USAGE;
  }
  if (cli.command.name === 'help') {
    io.stdout.write(`${usage()}\n`);
    return EXIT.OK;
  }
  const store = new FileRequestStateStore();
  const logins = new FileLoginStore(store.dir);
  const auth: AuthOptions = {
    ...(cli.token === undefined ? {} : { token: cli.token }),
    ...(cli.sigv4 || cli.region ? { sigv4: cli.region ? { region: cli.region } : true } : {}),
    logins,
  };
  const context: Context = { cli, io, store, logins, auth };
  const onInterrupt = () => {
    interrupted(context);
  };
  process.once('SIGINT', onInterrupt);
  try {
    return await run(cli.command, context);
  } catch (error) {
    return failure(error, context);
  } finally {
    process.removeListener('SIGINT', onInterrupt);
  }
}

/** Ctrl-C: the call keeps running on the server; say how to join it. */
function interrupted(context: Context): never {
  const { io } = context;
  io.stderr.write('\r\x1b[2K');
  if (context.current) io.stderr.write(`Interrupted; the call keeps running. Join it with: ${cliCommand()} join ${context.current.id}\n`);
  process.exit(130);
}

async function run(command: Command, context: Context): Promise<number> {
  const { store, auth } = context;
  switch (command.name) {
    case 'call':
      return call(command, context);
    case 'join':
      return wait((await store.get(command.id))?.handle ?? command.id, command.timeoutMs, command.answers, context);
    case 'answer':
      // The handle, for the Ctrl-C hint and what a refusal means.
      context.current = (await store.get(command.id))?.handle;
      return answerOpen(command.id, command.answers, questionContext(context));
    case 'status': {
      // The handle says whether the call was signed, for what a refusal means.
      context.current = (await store.get(command.id))?.handle;
      const current = await status(command.id, { store, auth });
      printStatus(current, context);
      return EXIT.OK;
    }
    case 'cancel': {
      context.current = (await store.get(command.id))?.handle;
      const after = await cancel(command.id, { store, auth });
      if (context.cli.json) printJson(after, context);
      else context.io.stdout.write(after.state === 'cancelled' ? `Cancelled ${after.id}\n` : `${after.id} had already ended: ${after.state}\n`);
      return EXIT.OK;
    }
    case 'list': {
      const entries = await list({ store });
      const rows = entries.map((e) => ({ ...e.handle, state: e.lastStatus?.state ?? 'unknown' }));
      if (context.cli.json) printJson(rows, context);
      else
        for (const row of rows)
          context.io.stdout.write(`${row.id}  ${row.state.padEnd(14)} ${row.tool.padEnd(24)} ${row.dialect.padEnd(16)} ${row.createdAt}  ${row.url}\n`);
      return EXIT.OK;
    }
    case 'tools': {
      const tools = await listTools(command.url, { auth });
      if (context.cli.json) printJson(tools, context);
      else for (const tool of tools) context.io.stdout.write(`${tool.name.padEnd(24)} ${tool.mode.padEnd(7)} ${tool.title ?? tool.description ?? ''}\n`);
      return EXIT.OK;
    }
    case 'login':
      return signIn(command, context);
    case 'logout': {
      const outcome = await logout(command.url, context.logins);
      if (context.cli.json) printJson({ url: command.url, ...outcome }, context);
      else if (!outcome.loggedOut) context.io.stdout.write(`Not logged in to ${command.url}; nothing to do.\n`);
      else
        context.io.stdout.write(
          `Logged out of ${command.url}${outcome.revoked === false ? ' (the authorization server did not confirm the refresh token revoked)' : ''}.\n`,
        );
      return EXIT.OK;
    }
    case 'token':
      return printToken(command.url, context);
    case 'help':
      return EXIT.OK;
  }
}

/**
 * `token <url>`: the kept login's access token, alone on stdout so `$(…)` takes it, with a
 * warning on stderr. It leaves the login file only through this command's stdout.
 */
async function printToken(url: string, context: Context): Promise<number> {
  const login = await currentLogin(context.logins, url, (input, init) => fetch(input, init));
  const { tokens } = login;
  const expiresAt = tokens.expires_in === undefined || login.tokensSavedAt === undefined ? undefined : new Date(login.tokensSavedAt + tokens.expires_in * 1000);
  const minutes = expiresAt ? Math.max(Math.round((expiresAt.getTime() - Date.now()) / 60_000), 0) : undefined;
  context.io.stderr.write(
    `async-mcp: this access token lets anyone who holds it act as you on ${url}${minutes === undefined ? '' : ` for about ${minutes} min`}. ` +
      'Keep it out of logs, shell history and command lines: hand it over in an environment variable or a file only you can read (mode 0600).\n',
  );
  if (context.cli.json) {
    printJson(
      {
        url,
        accessToken: tokens.access_token,
        tokenType: tokens.token_type,
        ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
        ...(tokens.scope ? { scope: tokens.scope } : {}),
      },
      context,
    );
  } else context.io.stdout.write(`${tokens.access_token}\n`);
  return EXIT.OK;
}

async function signIn(command: Extract<Command, { name: 'login' }>, context: Context): Promise<number> {
  const { io } = context;
  const outcome = await login(command.url, {
    store: context.logins,
    ...(command.timeoutMs === undefined ? {} : { timeoutMs: command.timeoutMs }),
    // The URL goes to stderr: stdout carries only the outcome (one JSON document with --json).
    onAuthorizationUrl: async (url, redirectUri) => {
      io.stderr.write(`To sign in to ${command.url}, open this URL in a browser:\n\n  ${url.href}\n\n`);
      const opened = command.openBrowser && (await openBrowser(url.href));
      io.stderr.write(`${opened ? 'Opened a browser. ' : ''}Waiting for the sign-in to come back to ${redirectUri} ...\n`);
    },
  });
  if (!outcome.loggedIn) {
    const message = `${command.url} answered HTTP ${outcome.httpStatus} without asking for a login; there is nothing to log in to`;
    if (context.cli.json) printJson({ url: command.url, loggedIn: false, error: { message } }, context);
    else io.stderr.write(`async-mcp: ${message}\n`);
    return EXIT.FAILED;
  }
  if (context.cli.json) printJson(outcome, context);
  else io.stdout.write(`Logged in to ${outcome.url}${outcome.scope ? ` (scope: ${outcome.scope})` : ''}.\n`);
  return EXIT.OK;
}

async function call(command: Extract<Command, { name: 'call' }>, context: Context): Promise<number> {
  const { store, auth, io } = context;
  const deadline = command.timeoutMs === undefined ? undefined : Date.now() + command.timeoutMs;
  const line = progressLine(context, command.tool);
  // One set of answers for the whole call: those a synchronous run uses are not given again.
  const using = answering(command.answers, questionContext(context), line);
  let handle: CallHandle;
  try {
    handle = await startToolCall(command.url, command.tool, command.args, {
      store,
      auth,
      // Every question a CLI call meets can be answered: on the terminal, by --answer, or
      // later by `answer <id>` from any process, so the call always declares it can answer.
      canAnswer: true,
      // A tool that runs synchronously asks before the call returns.
      onQuestion: cliQuestionHandler(using),
      ...(command.dialect ? { dialect: command.dialect } : {}),
      ...(line ? { onStatus: (s: CallStatus) => line.update(s) } : {}),
    });
  } catch (error) {
    line?.stop();
    if (error instanceof QuestionLeftOpenError) {
      // No handle to answer later: the library stopped the call.
      const message = `${command.tool} asked a question while it ran synchronously, and nothing answered it, so the call was stopped: give --answer, or run it on a terminal`;
      context.io.stderr.write(describeQuestion(error.question));
      throw new Error(message, { cause: error });
    }
    throw error;
  }
  context.current = handle;
  if (command.detach) {
    line?.stop();
    if (context.cli.json) printJson(handle, context);
    else io.stdout.write(`Started ${handle.tool} as ${handle.id} (${handle.dialect}).\nJoin it with: ${cliCommand()} join ${handle.id}\n`);
    return EXIT.OK;
  }
  // One line from start to result: the elapsed time counts from the start.
  let ended = false;
  try {
    const code = await wait(handle, deadline === undefined ? undefined : Math.max(deadline - Date.now(), 0), using, context, line);
    ended = code === EXIT.OK || code === EXIT.FAILED;
    return code;
  } catch (error) {
    ended = error instanceof CallFailedError || error instanceof CallCancelledError;
    throw error;
  } finally {
    // A call that waited to its end has nothing left to join: its handle goes. A detached,
    // timed-out or waiting one keeps it, to be joined or answered later.
    if (ended) await store.delete(handle.id);
  }
}

/** Joins and prints the result; exit 3 when the wait ran out with the call still running, 4 when it waits for an answer. */
async function wait(
  handle: CallHandle | string,
  timeoutMs: number | undefined,
  answers: readonly ScriptedAnswer[] | CliAnswering,
  context: Context,
  started?: ProgressLine,
): Promise<number> {
  const { store, auth } = context;
  if (typeof handle !== 'string') context.current = handle;
  const line = started ?? progressLine(context, typeof handle === 'string' ? handle : handle.tool);
  const id = typeof handle === 'string' ? handle : handle.id;
  let last: CallStatus | undefined;
  let result: CallToolResult | undefined;
  try {
    result = await join(handle, {
      store,
      auth,
      ...(timeoutMs === undefined ? {} : { timeoutMs }),
      onStatus: (s) => {
        last = s;
        line?.update(s);
      },
      onQuestion: cliQuestionHandler('answers' in answers ? answers : answering(answers, questionContext(context), line)),
    });
  } catch (error) {
    if (error instanceof QuestionLeftOpenError || error instanceof InvalidAnswerError) {
      line?.stop();
      return leftOpen(id, error, questionContext(context));
    }
    throw error;
  } finally {
    line?.stop();
  }
  if (!result) {
    if (context.cli.json)
      printJson({ id, state: last?.state ?? 'working', ...(last?.statusMessage ? { statusMessage: last.statusMessage } : {}), timedOut: true }, context);
    else context.io.stderr.write(`Still ${last?.state ?? 'running'} after ${formatMs(timeoutMs ?? 0)}. Join it later with: ${cliCommand()} join ${id}\n`);
    return EXIT.TIMED_OUT;
  }
  printResult(result, context);
  return result.isError === true ? EXIT.FAILED : EXIT.OK;
}

/** What the question commands need of the CLI's context. */
function questionContext(context: Context): QuestionContext {
  return { io: context.io, json: context.cli.json, store: context.store, auth: context.auth, onInterrupt: () => interrupted(context) };
}

function progressLine(context: Context, label: string): ProgressLine | undefined {
  return context.io.stderr.isTTY && !context.cli.json ? startProgressLine(context.io.stderr, label) : undefined;
}

function printJson(value: unknown, context: Context): void {
  context.io.stdout.write(`${JSON.stringify(value)}\n`);
}

function printStatus(current: CallStatus, context: Context): void {
  if (context.cli.json) {
    printJson(current, context);
    return;
  }
  const detail = [current.statusMessage, current.error].filter(Boolean).join(' — ');
  context.io.stdout.write(`${current.id}  ${current.state}${detail ? `  ${detail}` : ''}\n`);
  if (current.questions && current.questions.length > 0) context.io.stdout.write(describeOpenQuestions(cliCommand(), current.id, current.questions));
}

function printResult(result: CallToolResult, context: Context): void {
  if (context.cli.json) {
    printJson(result, context);
    return;
  }
  const texts = result.content.flatMap((block) => (block.type === 'text' && typeof block.text === 'string' ? [block.text] : []));
  const body = texts.length > 0 ? texts.join('\n') : JSON.stringify(result.structuredContent ?? result.content, null, 2);
  context.io.stdout.write(`${body}\n`);
  if (result.isError) context.io.stderr.write('The tool reported an error.\n');
}

function failure(error: unknown, context: Context): number {
  const message = `${error instanceof Error ? error.message : String(error)}${awsRefusalHint(error, context)}`;
  const details =
    error instanceof LoginRequiredError
      ? { loginRequired: error.url }
      : error instanceof CallFailedError || error instanceof McpRpcError
        ? { code: error.code, ...(error.data === undefined ? {} : { data: error.data }) }
        : {};
  const state = error instanceof CallCancelledError ? { state: 'cancelled' } : error instanceof CallFailedError ? { state: 'failed' } : {};
  if (context.cli.json) printJson({ ...(context.current ? { id: context.current.id } : {}), ...state, error: { message, ...details } }, context);
  else context.io.stderr.write(`async-mcp: ${message}\n`);
  return EXIT.FAILED;
}

/** What to do about AWS's own 403 (an IAM-authenticated Function URL), which carries no reason. */
function awsRefusalHint(error: unknown, context: Context): string {
  if (!(error instanceof McpRpcError) || !error.awsAccessDenied) return '';
  const signed = context.auth.sigv4 !== undefined || context.current?.auth === 'sigv4';
  return signed
    ? ": AWS refused the signed request: check that the credentials may call lambda:InvokeFunctionUrl on this function, and that the Region is the function's"
    : ': this URL takes SigV4-signed requests: add --sigv4';
}

function formatMs(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}
