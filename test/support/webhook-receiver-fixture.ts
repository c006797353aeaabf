/**
 * A webhook receiver on 127.0.0.1 for a whole test file, as the webhook unit tests share it:
 * started before the first test, closed after the last, and before each test emptied of its
 * posts and set again to echo verifications and answer 204.
 */
import { afterAll, beforeAll, beforeEach } from 'vitest';
import { answerVerifications } from './webhook-harness.ts';
import { startWebhookReceiver, type WebhookReceiver } from './webhook-receiver.ts';

/** Registers the file's hooks; the receiver it returns is there from its `beforeAll` on. */
export function webhookReceiverFixture(): () => WebhookReceiver {
  let receiver: WebhookReceiver | undefined;
  beforeAll(async () => {
    receiver = await startWebhookReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  beforeEach(() => {
    current().posts.length = 0;
    answerVerifications(current());
  });
  function current(): WebhookReceiver {
    if (!receiver) throw new Error('the webhook receiver is started in beforeAll');
    return receiver;
  }
  return current;
}
