/** Starts the real local stack on free loopback ports for one test file. */
import { SFNClient } from '@aws-sdk/client-sfn';
import { startLocalStack, type LocalStack, type LocalStackOptions } from '../../local/local-stack.ts';

export async function startTestStack(options: Partial<LocalStackOptions> = {}): Promise<LocalStack> {
  return startLocalStack({ toolsDir: 'state-machines', port: 0, ...options });
}

/** The stack plus an SFNClient on its Step Functions facade, to inspect executions. */
export async function startTestStackWithSfn(options: Partial<LocalStackOptions> = {}): Promise<{ stack: LocalStack; sfn: SFNClient }> {
  const stack = await startTestStack(options);
  const sfn = new SFNClient({ region: 'us-east-1', endpoint: stack.sfnEndpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  return { stack, sfn };
}

export async function stopTestStack(parts: { stack?: LocalStack; sfn?: SFNClient }): Promise<void> {
  parts.sfn?.destroy();
  await parts.stack?.close();
}
