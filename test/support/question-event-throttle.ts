/**
 * A fault the question tests inject: the question's `operation.input_required` event write is
 * throttled, as DynamoDB would answer once the SDK's own retries ran out.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export const INPUT_REQUIRED = 'operation.input_required';

/** How many more of those PutItems to throttle (set by the test), and how many were. */
export interface QuestionEventFaults {
  left: number;
  injected: number;
}

/** Throttles whole PutItem calls of a question's event on `client` while `left` is above 0. */
export function throttleQuestionEvents(client: DynamoDBClient): QuestionEventFaults {
  const faults = { left: 0, injected: 0 };
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Item?: Record<string, { S?: string }> };
      if (context.commandName === 'PutItemCommand' && input.Item?.name?.S === INPUT_REQUIRED && faults.left > 0) {
        faults.left--;
        faults.injected++;
        throw Object.assign(new Error('Rate of requests exceeds the allowed throughput.'), { name: 'ProvisionedThroughputExceededException' });
      }
      return next(args);
    },
    { step: 'initialize', name: 'throttleQuestionEvents' },
  );
  return faults;
}
