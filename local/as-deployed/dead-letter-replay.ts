/**
 * Replaying the event rules' dead letters: each letter goes through the target of the rule that
 * dead-lettered it (its RULE_ARN attribute) again, and leaves its queue once delivered.
 */
import type { DeployedStack } from '../assembly/deployed-stack.ts';
import type { DeadLetterQueue } from './dead-letter-queue.ts';
import type { RuleDelivery } from './event-rule-delivery.ts';

/** `rules` are the deliveries of `model.rules`, in the same order. */
export async function replayDeadLetters(queues: DeadLetterQueue[], rules: RuleDelivery[], model: DeployedStack): Promise<{ replayed: number; failed: number }> {
  let replayed = 0;
  let failed = 0;
  for (const queue of queues) {
    for (const letter of await queue.list()) {
      const rule = rules[model.rules.findIndex((deployed) => deployed.arn === letter.attributes.RULE_ARN)];
      const ok = rule !== undefined && (await rule.replay(letter));
      if (ok) {
        await queue.remove(letter.messageId);
        replayed++;
      } else failed++;
    }
  }
  return { replayed, failed };
}
