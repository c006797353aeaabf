/**
 * The elicitation form, rendered from its `requestedSchema`: MCP restricts it to a flat
 * object of primitives (string with format, number, integer, boolean, a single choice by
 * `enum` or `oneOf`, several choices by an array of them), so each property is one labelled
 * control. The browser checks required fields and bounds before anything is sent.
 */
import { h } from './dom.ts';

/** What the user did with the form, as an elicitation result. */
export type FormAnswer = { action: 'accept'; content: Record<string, unknown> } | { action: 'decline' };

interface Property {
  type?: string;
  title?: string;
  description?: string;
  format?: string;
  enum?: unknown[];
  enumNames?: string[];
  oneOf?: Array<{ const?: unknown; title?: string }>;
  items?: { enum?: unknown[]; anyOf?: Array<{ const?: unknown; title?: string }> };
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  default?: unknown;
}

type Reader = () => [present: boolean, value?: unknown];

/** Strings longer than this get a text area. */
const LONG_TEXT = 120;
const INPUT_TYPE_OF_FORMAT: Record<string, string> = { email: 'email', uri: 'url', date: 'date', 'date-time': 'datetime-local' };

/** The question's form; `answer` is called once with what the user chose, and the form disables itself. */
export function schemaForm(message: string, schema: Record<string, unknown>, answer: (result: FormAnswer) => void): HTMLFormElement {
  const properties = (typeof schema.properties === 'object' && schema.properties !== null ? schema.properties : {}) as Record<string, Property>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((key): key is string => typeof key === 'string') : []);
  const readers = new Map<string, Reader>();
  const fields = Object.entries(properties).map(([key, property], index) => {
    const id = `field-${index}`;
    const { control, read } = controlFor(id, property, required.has(key));
    readers.set(key, read);
    const hint = property.description ? h('p', { id: `${id}-hint`, class: 'hint' }, property.description) : undefined;
    if (hint) control.setAttribute('aria-describedby', hint.id);
    const label = property.title ?? key;
    if (control instanceof HTMLFieldSetElement) {
      control.prepend(h('legend', {}, label, required.has(key) ? ' (required)' : ''));
      return h('div', { class: 'field' }, control, hint);
    }
    return h(
      'div',
      { class: property.type === 'boolean' ? 'field check' : 'field' },
      h('label', { for: id }, label, required.has(key) ? ' (required)' : ''),
      control,
      hint,
    );
  });
  const decline = h('button', { type: 'button', class: 'secondary' }, 'Decline');
  const submit = h('button', { type: 'submit', class: 'primary' }, 'Submit');
  const form = h(
    'form',
    { class: 'question', 'aria-labelledby': 'question-heading' },
    h('h2', { id: 'question-heading' }, 'The run asks'),
    h('p', { class: 'question-message' }, message),
    ...fields,
    h('div', { class: 'actions' }, submit, decline),
  );
  const finish = (result: FormAnswer) => {
    for (const element of Array.from(form.elements)) (element as HTMLInputElement).disabled = true;
    answer(result);
  };
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const content: Record<string, unknown> = {};
    for (const [key, read] of readers) {
      const [present, value] = read();
      if (present) content[key] = value;
    }
    finish({ action: 'accept', content });
  });
  decline.addEventListener('click', () => finish({ action: 'decline' }));
  return form;
}

function controlFor(id: string, property: Property, isRequired: boolean): { control: HTMLElement; read: Reader } {
  const choices = choicesOf(property);
  if (choices) {
    const select = h('select', { id, name: id, required: isRequired }, isRequired ? undefined : h('option', { value: '' }, '(none)'));
    for (const [i, choice] of choices.entries()) {
      select.append(h('option', { value: String(i), selected: property.default !== undefined && choice.value === property.default }, choice.label));
    }
    return { control: select, read: () => (select.value === '' ? [false] : [true, choices[Number(select.value)]?.value]) };
  }
  if (property.type === 'array') {
    const options = choicesOf(property.items ?? {}) ?? [];
    const boxes = options.map((choice, i) =>
      h('input', { type: 'checkbox', id: `${id}-${i}`, value: String(i), checked: Array.isArray(property.default) && property.default.includes(choice.value) }),
    );
    const fieldset = h('fieldset', { id }, ...boxes.map((box, i) => h('label', { class: 'check', for: box.id }, box, options[i]?.label)));
    return { control: fieldset, read: () => [true, boxes.filter((box) => box.checked).map((box) => options[Number(box.value)]?.value)] };
  }
  if (property.type === 'boolean') {
    const box = h('input', { type: 'checkbox', id, name: id, checked: property.default === true });
    return { control: box, read: () => [true, box.checked] };
  }
  if (property.type === 'number' || property.type === 'integer') {
    const input = h('input', {
      type: 'number',
      id,
      name: id,
      required: isRequired,
      min: property.minimum,
      max: property.maximum,
      step: property.type === 'integer' ? 1 : 'any',
      value: typeof property.default === 'number' ? property.default : undefined,
    });
    return { control: input, read: () => (input.value === '' ? [false] : [true, Number(input.value)]) };
  }
  const common = {
    id,
    name: id,
    required: isRequired,
    minlength: property.minLength,
    maxlength: property.maxLength,
    value: typeof property.default === 'string' ? property.default : undefined,
  };
  const long = property.format === undefined && (property.maxLength === undefined || property.maxLength > LONG_TEXT);
  const input = long
    ? h('textarea', { ...common, rows: 3, value: undefined }, typeof property.default === 'string' ? property.default : '')
    : h('input', { ...common, type: INPUT_TYPE_OF_FORMAT[property.format ?? ''] ?? 'text' });
  return { control: input, read: () => (input.value === '' && !isRequired ? [false] : [true, input.value]) };
}

/** A single choice's options: `enum` (with the legacy `enumNames`) or `oneOf` of `const`s. */
function choicesOf(
  property: Pick<Property, 'enum' | 'enumNames' | 'oneOf'> & { anyOf?: Property['oneOf'] },
): Array<{ value: unknown; label: string }> | undefined {
  if (Array.isArray(property.enum)) return property.enum.map((value, i) => ({ value, label: property.enumNames?.[i] ?? String(value) }));
  const options = property.oneOf ?? property.anyOf;
  if (Array.isArray(options)) return options.map((option) => ({ value: option.const, label: option.title ?? String(option.const) }));
  return undefined;
}
