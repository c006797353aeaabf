import { describe, expect, it } from 'vitest';
import { lambdaMemorySizes, mcpFunctionTimeoutSeconds } from '../../bench/deployed-defaults.ts';
import { requestTimeoutSeconds } from '../../lambdas/operations/operations-limits.ts';

// The cost, listener and events benches once read these from the CDK source with patterns that a restructuring
// broke, so `npm run bench -- --only=cost` and `--only=listen` failed; they now come from the default template.
describe('the benches read what the default deployment bills', () => {
  it('finds the MCP, status-sync and worker memory sizes in the default template', () => {
    expect(lambdaMemorySizes()).toEqual({ mcp: 1024, statusSync: 256, worker: 512 });
  });

  it("finds the MCP function's timeout, which caps a stream's life", () => {
    expect(mcpFunctionTimeoutSeconds()).toBe(requestTimeoutSeconds(60));
  });
});
