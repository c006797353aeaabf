/** A tool spec for core unit tests; fields a test cares about are overridden. */
import type { ToolSpec } from '../../lambdas/operations/tool-spec.ts';

export function testTool(overrides: Partial<ToolSpec> & Pick<ToolSpec, 'name'>): ToolSpec {
  return {
    description: `test tool ${overrides.name}`,
    inputSchema: { type: 'object' },
    invocation: 'async',
    workflowType: 'STANDARD',
    timing: { keepAliveSeconds: 60, maxKeepAliveSeconds: 600, pollIntervalSeconds: 5, syncTimeoutSeconds: 1, maxRunSeconds: 3600 },
    stateMachineArn: `arn:aws:states:us-east-1:000000000000:stateMachine:${overrides.name}`,
    ...overrides,
  };
}
