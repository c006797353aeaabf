/** Starts the real local stack on free loopback ports for one test file. */
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/local-stack.ts';

export async function startTestStack(options: Partial<LocalStackOptions> = {}): Promise<LocalStack> {
  return startLocalStack({ toolsDir: 'state-machines', port: 0, ...options });
}
