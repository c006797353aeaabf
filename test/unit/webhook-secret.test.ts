/**
 * SEP-3415, `delivery.secret`: "The value MUST be a Standard Webhooks symmetric secret: the literal
 * prefix `whsec_` followed by the base64 encoding of 24 to 64 random bytes. Servers MUST reject
 * other values with `InvalidParams`."
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, parseWebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';

const secretOf = (bytes: number, fill = 7) => `whsec_${Buffer.alloc(bytes, fill).toString('base64')}`;

describe('webhook secrets', () => {
  it('takes whsec_ and the base64 of 24, 32 or 64 bytes, and keeps the decoded key', () => {
    for (const bytes of [24, 32, 64]) {
      const check = parseWebhookSecret(secretOf(bytes));
      expect(check.ok, String(bytes)).toBe(true);
      if (check.ok) {
        expect(check.secret.key).toEqual(Buffer.alloc(bytes, 7));
        expect(check.secret.text).toBe(secretOf(bytes));
      }
    }
  });

  it('takes the base64 without its padding, as the AI SDK does', () => {
    const padded = secretOf(25);
    expect(padded.endsWith('=')).toBe(true);
    expect(parseWebhookSecret(padded.replace(/=+$/, '')).ok).toBe(true);
  });

  it.each([
    ['23 bytes', secretOf(23), 'encodes 23'],
    ['65 bytes', secretOf(65), 'encodes 65'],
    ['no prefix', Buffer.alloc(32).toString('base64'), 'whsec_'],
    ['the wrong prefix', `whsk_${Buffer.alloc(32).toString('base64')}`, 'whsec_'],
    ['url-safe base64', `whsec_${Buffer.alloc(32, 0xfb).toString('base64url')}`, 'base64'],
    ['spaces', `whsec_ ${Buffer.alloc(32).toString('base64')}`, 'base64'],
    ['a dangling base64 character', `${secretOf(24)}A`, 'base64'],
    ['nothing after the prefix', 'whsec_', 'base64'],
    ['the empty string', '', 'whsec_'],
    ['a number', 42, 'string'],
    ['null', null, 'string'],
  ])('refuses %s, naming the problem', (_name, value, says) => {
    const check = parseWebhookSecret(value);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).toContain(says);
  });

  it('never quotes the refused value in its reason', () => {
    const nearly = `whsec_${Buffer.alloc(20, 0x5a).toString('base64')}`;
    const check = parseWebhookSecret(nearly);
    expect(check.ok).toBe(false);
    if (!check.ok) expect(check.reason).not.toContain(nearly.slice(6, 20));
  });

  it('generates secrets that it takes and that the standardwebhooks package reads', () => {
    const one = generateWebhookSecret();
    const other = generateWebhookSecret(64);
    expect(one).not.toBe(generateWebhookSecret());
    expect(parseWebhookSecret(one).ok).toBe(true);
    expect(parseWebhookSecret(other).ok).toBe(true);
    expect(() => new Webhook(one)).not.toThrow();
    expect(() => generateWebhookSecret(16)).toThrow(RangeError);
  });
});
