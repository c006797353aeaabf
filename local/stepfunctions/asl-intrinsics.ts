/**
 * The intrinsic functions of JSONPath payload templates (`"key.$": "States.Format('{}', $.a)"`).
 * Arguments are string literals in single quotes, numbers, booleans, null, paths, or nested
 * intrinsic calls. A wrong argument fails the state with `States.IntrinsicFailure`, as in AWS.
 */
import { createHash, randomUUID } from 'node:crypto';

type Read = (path: string) => unknown;

const FAILURE = 'States.IntrinsicFailure';

class IntrinsicFailure extends Error {
  constructor(message: string) {
    super(message);
    this.name = FAILURE;
  }
}

/** Evaluates one intrinsic call; `read` resolves path arguments. */
export function evaluateIntrinsic(text: string, read: Read): unknown {
  const parser = { text, at: 0 };
  const value = parseCall(parser, read);
  skipSpace(parser);
  if (parser.at !== text.length) throw new IntrinsicFailure(`Unexpected text after the intrinsic function in '${text}'`);
  return value;
}

function parseCall(parser: { text: string; at: number }, read: Read): unknown {
  const name = /^States\.[A-Za-z0-9]+/.exec(parser.text.slice(parser.at))?.[0];
  if (!name) throw new IntrinsicFailure(`'${parser.text}' is not an intrinsic function call`);
  parser.at += name.length;
  expect(parser, '(');
  const args: unknown[] = [];
  skipSpace(parser);
  if (parser.text[parser.at] === ')') parser.at++;
  else {
    for (;;) {
      args.push(parseArgument(parser, read));
      skipSpace(parser);
      const next = parser.text[parser.at++];
      if (next === ')') break;
      if (next !== ',') throw new IntrinsicFailure(`Expected ',' or ')' in '${parser.text}'`);
    }
  }
  const fn = FUNCTIONS[name];
  if (!fn) throw new IntrinsicFailure(`The intrinsic function ${name} is not supported`);
  return fn(...args);
}

function parseArgument(parser: { text: string; at: number }, read: Read): unknown {
  skipSpace(parser);
  const rest = parser.text.slice(parser.at);
  if (rest.startsWith('States.')) return parseCall(parser, read);
  if (rest.startsWith("'")) {
    let value = '';
    let i = 1;
    for (; i < rest.length && rest[i] !== "'"; i++) {
      if (rest[i] === '\\' && i + 1 < rest.length) i++;
      value += rest[i];
    }
    parser.at += i + 1;
    return value;
  }
  const token = /^[^,)\s]+/.exec(rest)?.[0] ?? '';
  parser.at += token.length;
  if (token.startsWith('$')) return read(token);
  if (token === 'null') return null;
  if (token === 'true' || token === 'false') return token === 'true';
  const number = Number(token);
  if (token === '' || Number.isNaN(number)) throw new IntrinsicFailure(`Invalid argument '${token}' in '${parser.text}'`);
  return number;
}

function expect(parser: { text: string; at: number }, char: string): void {
  skipSpace(parser);
  if (parser.text[parser.at] !== char) throw new IntrinsicFailure(`Expected '${char}' in '${parser.text}'`);
  parser.at++;
}

function skipSpace(parser: { text: string; at: number }): void {
  while (/\s/.test(parser.text[parser.at] ?? '')) parser.at++;
}

function array(value: unknown, name: string): unknown[] {
  if (!Array.isArray(value)) throw new IntrinsicFailure(`${name} expects an array`);
  return value;
}

function integer(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) throw new IntrinsicFailure(`${name} expects an integer`);
  return value;
}

const FUNCTIONS: Record<string, (...args: unknown[]) => unknown> = {
  'States.Format': (template, ...values) => {
    let index = 0;
    return String(template).replace(/\\([{}\\'])|\{\}/g, (_match, escaped: string | undefined) => {
      if (escaped) return escaped;
      if (index >= values.length) throw new IntrinsicFailure('States.Format has more {} than arguments');
      const value = values[index++];
      return typeof value === 'string' ? value : JSON.stringify(value);
    });
  },
  'States.StringToJson': (text) => JSON.parse(String(text)) as unknown,
  'States.JsonToString': (value) => JSON.stringify(value),
  'States.Array': (...values) => values,
  'States.ArrayPartition': (values, size) => {
    const items = array(values, 'States.ArrayPartition');
    const chunk = integer(size, 'States.ArrayPartition');
    const chunks: unknown[][] = [];
    for (let i = 0; i < items.length; i += chunk) chunks.push(items.slice(i, i + chunk));
    return chunks;
  },
  'States.ArrayContains': (values, value) => array(values, 'States.ArrayContains').some((item) => JSON.stringify(item) === JSON.stringify(value)),
  'States.ArrayRange': (start, end, step) => {
    const [from, to, by] = [integer(start, 'States.ArrayRange'), integer(end, 'States.ArrayRange'), integer(step, 'States.ArrayRange')];
    if (by === 0) throw new IntrinsicFailure('States.ArrayRange step must not be 0');
    const values: number[] = [];
    for (let value = from; by > 0 ? value <= to : value >= to; value += by) values.push(value);
    return values;
  },
  'States.ArrayGetItem': (values, index) => array(values, 'States.ArrayGetItem')[integer(index, 'States.ArrayGetItem')],
  'States.ArrayLength': (values) => array(values, 'States.ArrayLength').length,
  'States.ArrayUnique': (values) => {
    const seen = new Set<string>();
    return array(values, 'States.ArrayUnique').filter((item) => !seen.has(JSON.stringify(item)) && seen.add(JSON.stringify(item)));
  },
  'States.Base64Encode': (text) => Buffer.from(String(text)).toString('base64'),
  'States.Base64Decode': (text) => Buffer.from(String(text), 'base64').toString('utf8'),
  'States.Hash': (value, algorithm) => {
    const name = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' }[String(algorithm)];
    if (!name) throw new IntrinsicFailure(`States.Hash does not know the algorithm ${String(algorithm)}`);
    return createHash(name)
      .update(typeof value === 'string' ? value : JSON.stringify(value))
      .digest('hex');
  },
  'States.JsonMerge': (left, right, deep) => {
    if (deep !== false) throw new IntrinsicFailure('States.JsonMerge supports only a shallow merge (false)');
    return { ...(left as object), ...(right as object) };
  },
  'States.MathRandom': (start, end) => {
    const [from, to] = [integer(start, 'States.MathRandom'), integer(end, 'States.MathRandom')];
    return from + Math.floor(Math.random() * (to - from));
  },
  'States.MathAdd': (a, b) => integer(a, 'States.MathAdd') + integer(b, 'States.MathAdd'),
  'States.StringSplit': (text, separators) =>
    String(text)
      .split(new RegExp(`[${escapeClass(String(separators))}]`))
      .filter((part) => part !== ''),
  'States.UUID': () => randomUUID(),
};

function escapeClass(chars: string): string {
  return chars.replace(/[\\\]^-]/g, '\\$&');
}
