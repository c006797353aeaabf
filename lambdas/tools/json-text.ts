/**
 * JSON text parsed with its first syntax error named by line and column: a person fixing a
 * tool folder looks for a line, and `JSON.parse` names a character position, or on some Node
 * versions no place at all.
 */

/** The value, or where the text stops being JSON (1-based line and column) and why. */
export type JsonText = { ok: true; value: unknown } | { ok: false; line: number; column: number; reason: string };

/** Parses `text` as `JSON.parse` does; on failure, finds the first error itself. */
export function parseJsonText(text: string): JsonText {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    const found = firstSyntaxError(text);
    // The scanner follows RFC 8259 as JSON.parse does; should they ever disagree, JSON.parse's message still names the fault.
    const { offset, reason } = found ?? { offset: 0, reason: (error as Error).message };
    return { ok: false, ...lineAndColumn(text, offset), reason };
  }
}

class JsonSyntaxError extends Error {
  constructor(
    readonly offset: number,
    readonly reason: string,
  ) {
    super(reason);
    this.name = 'JsonSyntaxError';
  }
}

/** The offset and reason of the first RFC 8259 violation in `text`, or undefined when it is valid JSON. */
function firstSyntaxError(text: string): { offset: number; reason: string } | undefined {
  let i = 0;
  const fail = (reason: string, at = i): never => {
    throw new JsonSyntaxError(at, at >= text.length ? 'unexpected end of the text' : reason);
  };
  const skipWhitespace = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i] as string)) i++;
  };
  const expect = (char: string, reason: string) => {
    if (text[i] !== char) fail(reason);
    i++;
  };
  const string = () => {
    const start = i;
    i++;
    for (;;) {
      // Named where the string opens: its closing quote is what is missing.
      if (i >= text.length) throw new JsonSyntaxError(start, 'a string that is never closed');
      const char = text.charCodeAt(i);
      if (char === 0x22) break;
      if (char < 0x20) fail('a line break or control character inside a string must be escaped');
      if (char === 0x5c) {
        const escaped = text[i + 1];
        if (escaped === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) i += 6;
        else if (escaped !== undefined && '"\\/bfnrt'.includes(escaped)) i += 2;
        else fail(`invalid escape in a string (use \\" \\\\ \\/ \\b \\f \\n \\r \\t or \\uXXXX)`);
      } else i++;
    }
    i++;
  };
  const number = () => {
    const match = /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/.exec(text.slice(i));
    if (!match) fail('expected a value');
    i += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    skipWhitespace();
    const char = text[i] ?? '';
    const literal = ['true', 'false', 'null'].find((word) => text.startsWith(word, i));
    if (char === '{') object();
    else if (char === '[') array();
    else if (char === '"') string();
    else if (char === '-' || (char >= '0' && char <= '9')) number();
    else if (literal) i += literal.length;
    else fail('expected a value (an object, array, string, number, true, false or null)');
  };
  const object = () => {
    i++;
    skipWhitespace();
    if (text[i] === '}') {
      i++;
      return;
    }
    for (;;) {
      skipWhitespace();
      if (text[i] !== '"') fail('expected a property name in double quotes (JSON allows no trailing comma)');
      string();
      skipWhitespace();
      expect(':', "expected ':' after the property name");
      value();
      skipWhitespace();
      if (text[i] === '}') {
        i++;
        return;
      }
      expect(',', "expected ',' or '}' after the property value");
    }
  };
  const array = () => {
    i++;
    skipWhitespace();
    if (text[i] === ']') {
      i++;
      return;
    }
    for (;;) {
      skipWhitespace();
      if (text[i] === ']' || text[i] === ',') fail('expected a value (JSON allows no empty element or trailing comma)');
      value();
      skipWhitespace();
      if (text[i] === ']') {
        i++;
        return;
      }
      expect(',', "expected ',' or ']' after the element");
    }
  };
  try {
    value();
    skipWhitespace();
    if (i < text.length) fail('unexpected text after the JSON value');
    return undefined;
  } catch (error) {
    if (error instanceof JsonSyntaxError) return { offset: error.offset, reason: error.reason };
    throw error;
  }
}

function lineAndColumn(text: string, offset: number): { line: number; column: number } {
  const before = text.slice(0, offset);
  const lineStart = before.lastIndexOf('\n') + 1;
  return { line: before.split('\n').length, column: offset - lineStart + 1 };
}
