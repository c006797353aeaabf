/**
 * A value for `AWS::SecretsManager::Secret` `GenerateSecretString`, drawn as Secrets Manager's
 * GetRandomPassword draws it: from the character classes not excluded, at least one of each when
 * `RequireEachIncludedType` (the default), with a cryptographic generator.
 */
import { randomInt } from 'node:crypto';

/** The template property, as CloudFormation documents it. */
export interface GenerateSecretStringSpec {
  PasswordLength?: number;
  ExcludeCharacters?: string;
  ExcludeLowercase?: boolean;
  ExcludeNumbers?: boolean;
  ExcludePunctuation?: boolean;
  ExcludeUppercase?: boolean;
  IncludeSpace?: boolean;
  RequireEachIncludedType?: boolean;
  /** A JSON object the generated string is added to, under `GenerateStringKey`. */
  SecretStringTemplate?: string;
  GenerateStringKey?: string;
}

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const UPPER = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';
const DIGITS = '0123456789';
const PUNCTUATION = '!"#$%&\'()*+,-./:;<=>?@[\\]^_`{|}~';

/** The secret string a new secret gets from `spec`. */
export function generateSecretString(spec: GenerateSecretStringSpec = {}): string {
  const password = randomPassword(spec);
  if (spec.SecretStringTemplate === undefined) return password;
  if (!spec.GenerateStringKey) throw new Error('GenerateSecretString: SecretStringTemplate needs GenerateStringKey');
  const template = JSON.parse(spec.SecretStringTemplate) as Record<string, unknown>;
  return JSON.stringify({ ...template, [spec.GenerateStringKey]: password });
}

function randomPassword(spec: GenerateSecretStringSpec): string {
  const length = spec.PasswordLength ?? 32;
  if (!Number.isInteger(length) || length < 1 || length > 4096) throw new Error(`GenerateSecretString: PasswordLength ${length} is not 1..4096`);
  const excluded = new Set(spec.ExcludeCharacters ?? '');
  const classes = [
    spec.ExcludeLowercase ? '' : LOWER,
    spec.ExcludeUppercase ? '' : UPPER,
    spec.ExcludeNumbers ? '' : DIGITS,
    spec.ExcludePunctuation ? '' : PUNCTUATION,
    spec.IncludeSpace ? ' ' : '',
  ]
    .map((chars) => [...chars].filter((c) => !excluded.has(c)).join(''))
    .filter((chars) => chars.length > 0);
  const all = classes.join('');
  if (!all) throw new Error('GenerateSecretString excludes every character');
  const required = spec.RequireEachIncludedType ?? true;
  const chars = Array.from({ length }, () => all.charAt(randomInt(all.length)));
  if (required && length >= classes.length) {
    // One of each class at distinct random positions.
    const positions = shuffle([...Array(length).keys()]).slice(0, classes.length);
    for (const [i, set] of classes.entries()) {
      const position = positions[i];
      if (position !== undefined) chars[position] = set.charAt(randomInt(set.length));
    }
  }
  return chars.join('');
}

function shuffle<T>(items: T[]): T[] {
  for (let i = items.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    const item = items[i] as T;
    items[i] = items[j] as T;
    items[j] = item;
  }
  return items;
}
