/**
 * SEP-3415, "Signature scheme (Standard Webhooks profile)": each delivery carries `webhook-id`,
 * `webhook-timestamp` and `webhook-signature`; "The header MAY contain several space-delimited
 * signatures (`v1,<sigA> v1,<sigB>`) during secret rotation. The receiver accepts the delivery if
 * any of them verifies." Verified here by the standardwebhooks package, an off-the-shelf verifier.
 */
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { generateWebhookSecret, parseWebhookSecret, type WebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { controlMessageId, signWebhook } from '../../lambdas/events/webhooks/webhook-signature.ts';

function secret(text = generateWebhookSecret()): WebhookSecret {
  const check = parseWebhookSecret(text);
  if (!check.ok) throw new Error(check.reason);
  return check.secret;
}

const body = JSON.stringify({
  eventId: 'evt_1',
  name: 'operation.finished',
  timestamp: '2026-10-05T12:00:00Z',
  data: { tool: 'analyze_dataset', note: 'naïve ✓' },
  cursor: 'c1',
});

describe('webhook signatures', () => {
  it('signs a body so that the standardwebhooks package verifies it and returns the same JSON', () => {
    const key = secret();
    const headers = signWebhook({ id: 'evt_1', body, secrets: [key] });
    expect(headers['webhook-id']).toBe('evt_1');
    expect(headers['webhook-timestamp']).toMatch(/^\d+$/);
    expect(headers['webhook-signature']).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(new Webhook(key.text).verify(body, { ...headers })).toEqual(JSON.parse(body));
  });

  it('during a rotation signs under both secrets, and either one verifies', () => {
    const [fresh, old] = [secret(), secret()];
    const headers = signWebhook({ id: 'evt_1', body, secrets: [fresh, old] });
    expect(headers['webhook-signature'].split(' ')).toHaveLength(2);
    expect(new Webhook(fresh.text).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(new Webhook(old.text).verify(body, { ...headers })).toEqual(JSON.parse(body));
    expect(() => new Webhook(secret().text).verify(body, { ...headers })).toThrow();
  });

  it('covers the exact bytes: a re-serialized or altered body does not verify', () => {
    const key = secret();
    const headers = signWebhook({ id: 'evt_1', body, secrets: [key] });
    const reserialized = JSON.stringify(JSON.parse(body), null, 1);
    expect(() => new Webhook(key.text).verify(reserialized, { ...headers })).toThrow();
    expect(() => new Webhook(key.text).verify(body.replace('c1', 'c2'), { ...headers })).toThrow();
    expect(() => new Webhook(key.text).verify(body, { ...headers, 'webhook-id': 'evt_2' })).toThrow();
  });

  it('stamps the time of the attempt, so a retry is fresh and an old signature is stale', () => {
    const key = secret();
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    const stale = signWebhook({ id: 'evt_1', body, secrets: [key], now: tenMinutesAgo });
    expect(stale['webhook-timestamp']).toBe(String(Math.floor(tenMinutesAgo.getTime() / 1000)));
    expect(() => new Webhook(key.text).verify(body, { ...stale })).toThrow(/timestamp/i);
    const retry = signWebhook({ id: 'evt_1', body, secrets: [key] });
    expect(new Webhook(key.text).verify(body, { ...retry })).toEqual(JSON.parse(body));
  });

  it('signs with keys of 24 and 64 bytes alike', () => {
    for (const bytes of [24, 64]) {
      const key = secret(generateWebhookSecret(bytes));
      expect(new Webhook(key.text).verify(body, { ...signWebhook({ id: 'evt_1', body, secrets: [key] }) })).toEqual(JSON.parse(body));
    }
  });

  it('refuses to sign with no secret, or an id that cannot be a header', () => {
    expect(() => signWebhook({ id: 'evt_1', body, secrets: [] })).toThrow(RangeError);
    expect(() => signWebhook({ id: 'evt 1', body, secrets: [secret()] })).toThrow(RangeError);
    expect(() => signWebhook({ id: 'evt\r\n1', body, secrets: [secret()] })).toThrow(RangeError);
  });

  it('names control envelopes msg_<type>_<random>: the same id for every try of one message, another for another message', () => {
    const id = controlMessageId('verification', 'sub_1\nnonce');
    expect(id).toMatch(/^msg_verification_[0-9a-f]{32}$/);
    expect(controlMessageId('verification', 'sub_1\nnonce')).toBe(id);
    expect(controlMessageId('verification', 'sub_1\nanother')).not.toBe(id);
    expect(controlMessageId('terminated', 'sub_1\nnonce')).not.toBe(id);
    const key = secret();
    const challenge = JSON.stringify({ type: 'verification', challenge: 'nonce' });
    expect(new Webhook(key.text).verify(challenge, { ...signWebhook({ id, body: challenge, secrets: [key] }) })).toEqual({
      type: 'verification',
      challenge: 'nonce',
    });
  });
});
