/**
 * One field of a question's form as the terminal asks it: its prompt line, worded as its
 * schema type suggests (text, number, yes/no, a numbered choice for an enum, the default
 * shown), and what the user typed turned into the field's value.
 */

/** A property of an elicitation's `requestedSchema` (a primitive schema, or an array of choices). */
export type FieldSchema = Record<string, unknown>;

/** The choices of an enum field: `enum` (with `enumNames`), or `oneOf`/`anyOf` of `{ const, title }`. */
export function choicesOf(schema: FieldSchema): Array<{ value: unknown; label: string }> | undefined {
  const source = schema.type === 'array' && isObject(schema.items) ? schema.items : schema;
  if (Array.isArray(source.enum)) {
    const names = Array.isArray(source.enumNames) ? source.enumNames : [];
    return source.enum.map((value, index) => ({ value, label: typeof names[index] === 'string' ? names[index] : String(value) }));
  }
  const options = Array.isArray(source.oneOf) ? source.oneOf : Array.isArray(source.anyOf) ? source.anyOf : undefined;
  if (options?.every((option) => isObject(option) && 'const' in option))
    return options.map((option) => ({ value: option.const, label: typeof option.title === 'string' ? option.title : String(option.const) }));
  return undefined;
}

type FieldKind = 'choice' | 'choices' | 'boolean' | 'integer' | 'number' | 'text';

export function fieldKind(schema: FieldSchema): FieldKind {
  if (choicesOf(schema)) return schema.type === 'array' ? 'choices' : 'choice';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.type === 'integer') return 'integer';
  if (schema.type === 'number') return 'number';
  return 'text';
}

/**
 * The lines that ask for one field: the choices (numbered) when it has them, then the prompt,
 * ending in `: `, with its title, whether it is optional, its kind and its default.
 */
export function renderField(name: string, schema: FieldSchema, required: boolean): string[] {
  const title = typeof schema.title === 'string' ? schema.title : name;
  const kind = fieldKind(schema);
  const notes: string[] = [];
  const lines: string[] = [];
  if (typeof schema.description === 'string' && schema.description !== title) lines.push(`  ${schema.description}`);
  const choices = choicesOf(schema);
  if (choices) {
    choices.forEach((choice, index) => {
      lines.push(`    ${index + 1}) ${choice.label}`);
    });
    notes.push(kind === 'choices' ? `numbers 1-${choices.length}, comma-separated` : `1-${choices.length}`);
  } else if (kind === 'boolean') {
    notes.push('y/n');
  } else if (kind === 'integer' || kind === 'number') {
    notes.push([kind === 'integer' ? 'a whole number' : 'a number', range(schema.minimum, schema.maximum)].filter(Boolean).join(' '));
  } else {
    const format = typeof schema.format === 'string' ? schema.format : undefined;
    notes.push([format ? `text, ${format}` : 'text', lengthNote(schema)].filter(Boolean).join(' '));
  }
  if (!required) notes.push('optional');
  const shown = defaultShown(schema, choices);
  lines.push(`${title} (${notes.join(', ')})${shown === undefined ? '' : ` [${shown}]`}: `);
  return lines;
}

/**
 * What the user typed, as the field's value: `{ value }`, `{ skip }` for an empty optional
 * field without a default, or `{ error }` to ask again. Empty input takes the default.
 */
export function readField(schema: FieldSchema, required: boolean, typed: string): { value: unknown } | { skip: true } | { error: string } {
  const text = typed.trim();
  if (text === '') {
    if (schema.default !== undefined) return { value: schema.default };
    return required ? { error: 'required' } : { skip: true };
  }
  const choices = choicesOf(schema);
  switch (fieldKind(schema)) {
    case 'choice': {
      const chosen = pick(choices ?? [], text);
      return chosen === undefined ? { error: `pick 1-${choices?.length ?? 0}` } : { value: chosen };
    }
    case 'choices': {
      const picked = text.split(',').map((part) => pick(choices ?? [], part.trim()));
      return picked.some((value) => value === undefined) ? { error: `pick numbers 1-${choices?.length ?? 0}, comma-separated` } : { value: picked };
    }
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return { value: true };
      if (/^(n|no|false)$/i.test(text)) return { value: false };
      return { error: 'answer y or n' };
    case 'integer':
    case 'number': {
      const value = Number(text);
      if (!Number.isFinite(value)) return { error: 'not a number' };
      if (schema.type === 'integer' && !Number.isInteger(value)) return { error: 'not a whole number' };
      return { value };
    }
    default:
      return { value: typed };
  }
}

function pick(choices: Array<{ value: unknown; label: string }>, text: string): unknown {
  const index = /^\d+$/.test(text) ? Number(text) - 1 : -1;
  if (index >= 0 && index < choices.length) return choices[index]?.value;
  return choices.find((choice) => String(choice.value) === text || choice.label === text)?.value;
}

function defaultShown(schema: FieldSchema, choices: Array<{ value: unknown; label: string }> | undefined): string | undefined {
  if (schema.default === undefined) return undefined;
  if (typeof schema.default === 'boolean') return schema.default ? 'y' : 'n';
  const label = (value: unknown) => choices?.find((choice) => choice.value === value)?.label ?? String(value);
  return Array.isArray(schema.default) ? schema.default.map(label).join(', ') : label(schema.default);
}

function range(minimum: unknown, maximum: unknown): string {
  const min = typeof minimum === 'number' ? minimum : undefined;
  const max = typeof maximum === 'number' ? maximum : undefined;
  if (min !== undefined && max !== undefined) return `from ${min} to ${max}`;
  if (min !== undefined) return `at least ${min}`;
  return max === undefined ? '' : `at most ${max}`;
}

function lengthNote(schema: FieldSchema): string {
  const max = typeof schema.maxLength === 'number' ? schema.maxLength : undefined;
  const min = typeof schema.minLength === 'number' ? schema.minLength : undefined;
  if (min !== undefined && max !== undefined) return `${min} to ${max} characters`;
  if (max !== undefined) return `up to ${max} characters`;
  return min === undefined ? '' : `at least ${min} characters`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
