/**
 * The `async-mcp` command line, parsed: commands, options and the exit codes scripts rely
 * on (0 success; 1 tool error, failed or cancelled call, server error; 2 usage; 3 timed out
 * with the call still running; 4 a question nothing answered, the call still waiting for it;
 * 141 stdout closed by its reader, as a shell reports a program killed by SIGPIPE).
 */
import { parseArgs } from 'node:util';
import { ASYNC_DIALECTS, type Dialect } from './call-handle.ts';
import { parseAnswerOption, type ScriptedAnswer } from './cli-answers.ts';
import { cliCommand } from './cli-command.ts';
import { docsPath } from './help-paths.ts';

export const EXIT = { OK: 0, FAILED: 1, USAGE: 2, TIMED_OUT: 3, QUESTION_OPEN: 4, PIPE_CLOSED: 141 } as const;

/** The usage text, its commands worded as `command` starts the CLI (`npm run cli --` in a clone: see cli-command.ts). */
export function usage(command: string = cliCommand()): string {
  return `Usage:
  ${command} call <url> <tool> [--args JSON | -a key=value ...] [--detach] [--dialect tasks|tasks-2025-11-25|sep-1391] [--timeout 90s] [--answer [KEY=]VALUE ...]
  ${command} join <id> [--timeout 30s] [--answer [KEY=]VALUE ...]
  ${command} answer <id> [--answer [KEY=]VALUE ...]
  ${command} status <id>
  ${command} cancel <id>
  ${command} list
  ${command} tools <url>
  ${command} login <url> [--no-browser] [--timeout 5m]
  ${command} logout <url>
  ${command} token <url>

login signs in to an OAuth-protected server in the browser (it prints the URL, and opens a
browser unless --no-browser or none is available; $BROWSER picks the command) and keeps the
login; call, join, answer, status, cancel and tools then use it for that server, renewing it when it
expires. logout removes it. token prints the login's access token (renewed first if it has
expired) for curl or another client: it is a secret, so keep it out of logs and command lines.

A tool may ask a question while it runs. On a terminal, call, join and answer ask it there:
each field of the form, then accept, decline or cancel. --answer answers it in scripts
(repeatable): VALUE is a JSON object to accept with, decline, or cancel; KEY= picks the
question by its key, and without one it answers the next question no keyed answer covers.
A question nothing answers leaves the call waiting: the CLI prints it and the answer
command, and exits 4. answer <id> answers it later, from any process; status <id> shows it.
Every call the CLI starts declares that it can answer (elicitation): answer <id> always can.

Options for every command:
  --json            one JSON document on stdout, as the last line
  --token TOKEN     bearer token (default: the server's login, else $ASYNC_MCP_TOKEN)
  --sigv4           sign requests with AWS SigV4 (IAM Function URLs; credentials from the default chain)
  --region REGION   Region to sign for (default: from the Function URL, else $AWS_REGION)
Handles and logins are kept in $ASYNC_MCP_STATE_DIR (default: the user's state directory),
readable only by the user.
Exit codes: 0 success, 1 tool error or failed/cancelled call or server error, 2 usage, 3 timed out (still running),
4 waiting for an answer (still running), 141 stdout closed early (… | head).
More, with the client library: ${docsPath('clients.md#call-now-join-later-the-client-library-and-cli')}`;
}

/** The usage text as the installed bin words it. */
export const USAGE = usage('async-mcp');

export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export type Command =
  | {
      name: 'call';
      url: string;
      tool: string;
      args: Record<string, unknown>;
      detach: boolean;
      dialect?: Exclude<Dialect, 'sync'>;
      timeoutMs?: number;
      answers: ScriptedAnswer[];
    }
  | { name: 'join'; id: string; timeoutMs?: number; answers: ScriptedAnswer[] }
  | { name: 'answer'; id: string; answers: ScriptedAnswer[] }
  | { name: 'status' | 'cancel'; id: string }
  | { name: 'list' }
  | { name: 'tools'; url: string }
  | { name: 'login'; url: string; openBrowser: boolean; timeoutMs?: number }
  | { name: 'logout'; url: string }
  | { name: 'token'; url: string }
  | { name: 'help' };

export interface ParsedCli {
  command: Command;
  json: boolean;
  token?: string;
  sigv4: boolean;
  region?: string;
}

/** `90s`, `1.5m`, `500ms`, `2h`, or a bare number of seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new UsageError(`Not a duration: ${text} (use e.g. 500ms, 30s, 5m, 1h)`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[match[2] ?? 's'] ?? 1000;
  return Math.round(Number(match[1]) * unit);
}

/** `key=value`: the value as JSON when it parses (numbers, booleans, objects), else as a string. */
function parseAssignment(text: string): [string, unknown] {
  const equals = text.indexOf('=');
  if (equals <= 0) throw new UsageError(`-a takes key=value, not ${text}`);
  const raw = text.slice(equals + 1);
  try {
    return [text.slice(0, equals), JSON.parse(raw)];
  } catch {
    return [text.slice(0, equals), raw];
  }
}

function toolArguments(json: string | undefined, assignments: string[]): Record<string, unknown> {
  let args: Record<string, unknown> = {};
  if (json !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(json);
    } catch {
      throw new UsageError('--args must be a JSON object');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--args must be a JSON object');
    args = parsed as Record<string, unknown>;
  }
  for (const assignment of assignments) {
    const [key, value] = parseAssignment(assignment);
    args[key] = value;
  }
  return args;
}

function positionals(command: string, values: string[], names: string[]): string[] {
  if (values.length !== names.length) throw new UsageError(`${command} takes ${names.map((n) => `<${n}>`).join(' ') || 'no arguments'}`);
  return values;
}

/** The one operand of a command that takes exactly one. */
function operand(command: string, values: string[], name: string): string {
  const [value] = positionals(command, values, [name]);
  if (value === undefined) throw new UsageError(`${command} takes <${name}>`);
  return value;
}

function parseOptions(argv: string[]) {
  return parseArgs({
    args: argv,
    allowPositionals: true,
    strict: true,
    options: {
      args: { type: 'string' },
      arg: { type: 'string', short: 'a', multiple: true },
      detach: { type: 'boolean' },
      dialect: { type: 'string' },
      timeout: { type: 'string' },
      json: { type: 'boolean' },
      token: { type: 'string' },
      sigv4: { type: 'boolean' },
      region: { type: 'string' },
      answer: { type: 'string', multiple: true },
      'no-browser': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
}

export function parseCli(argv: string[]): ParsedCli {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals: rest } = parsed;
  const common = {
    json: values.json ?? false,
    sigv4: values.sigv4 ?? false,
    ...(values.token === undefined ? {} : { token: values.token }),
    ...(values.region === undefined ? {} : { region: values.region }),
  };
  const [name, ...operands] = rest;
  if (values.help || name === undefined || name === 'help') return { ...common, command: { name: 'help' } };
  const timeout = values.timeout === undefined ? {} : { timeoutMs: parseDuration(values.timeout) };
  const onlyFor = (allowed: boolean, option: string) => {
    if (!allowed) throw new UsageError(`${option} is not an option of ${name}`);
  };
  onlyFor(name === 'call' || (values.args === undefined && values.arg === undefined), '--args / -a');
  onlyFor(name === 'call' || (values.detach === undefined && values.dialect === undefined), '--detach / --dialect');
  onlyFor(name === 'call' || name === 'join' || name === 'login' || values.timeout === undefined, '--timeout');
  onlyFor(name === 'login' || values['no-browser'] === undefined, '--no-browser');
  onlyFor(name === 'call' || name === 'join' || name === 'answer' || values.answer === undefined, '--answer');
  const answers = (values.answer ?? []).map((text) => {
    const parsed = parseAnswerOption(text);
    if (!parsed.ok) throw new UsageError(parsed.message);
    return parsed.answer;
  });
  onlyFor(
    (name !== 'login' && name !== 'logout' && name !== 'token') || (values.token === undefined && !values.sigv4 && values.region === undefined),
    '--token / --sigv4 / --region',
  );
  switch (name) {
    case 'call': {
      const [url, tool] = positionals(name, operands, ['url', 'tool']) as [string, string];
      const dialect = values.dialect;
      if (dialect !== undefined && !(ASYNC_DIALECTS as readonly string[]).includes(dialect))
        throw new UsageError(`--dialect is one of ${ASYNC_DIALECTS.join(', ')}`);
      if (values.detach && values.timeout !== undefined) throw new UsageError('--timeout applies to a call that waits, not to --detach');
      if (values.detach && answers.length > 0) throw new UsageError('--answer applies to a call that waits; answer a detached call with answer <id>');
      return {
        ...common,
        command: {
          name,
          url: checkUrl(url),
          tool,
          args: toolArguments(values.args, values.arg ?? []),
          detach: values.detach ?? false,
          ...(dialect === undefined ? {} : { dialect: dialect as Exclude<Dialect, 'sync'> }),
          ...timeout,
          answers,
        },
      };
    }
    case 'join':
      return { ...common, command: { name, id: operand(name, operands, 'id'), ...timeout, answers } };
    case 'answer':
      return { ...common, command: { name, id: operand(name, operands, 'id'), answers } };
    case 'status':
    case 'cancel':
      return { ...common, command: { name, id: operand(name, operands, 'id') } };
    case 'list':
      positionals(name, operands, []);
      return { ...common, command: { name } };
    case 'tools':
      return { ...common, command: { name, url: checkUrl(operand(name, operands, 'url')) } };
    case 'login':
      return {
        ...common,
        command: { name, url: checkUrl(operand(name, operands, 'url')), openBrowser: !(values['no-browser'] ?? false), ...timeout },
      };
    case 'logout':
    case 'token':
      return { ...common, command: { name, url: checkUrl(operand(name, operands, 'url')) } };
    default:
      throw new UsageError(`Unknown command: ${name}`);
  }
}

function checkUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.href;
  } catch {
    // reported below
  }
  throw new UsageError(`Not an http(s) URL: ${url}`);
}
