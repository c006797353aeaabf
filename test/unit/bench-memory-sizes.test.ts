import { describe, expect, it } from 'vitest';
import { lambdaMemorySizes } from '../../bench/operation-cost.ts';

// The cost bench once read these sizes from the CDK source with patterns that a restructuring broke,
// so `npm run bench -- --only=cost` failed; they now come from the default template, and this keeps them found.
describe('the cost bench reads what the default deployment bills', () => {
  it('finds the MCP, status-sync and worker memory sizes in the default template', () => {
    expect(lambdaMemorySizes()).toEqual({ mcp: 1024, statusSync: 256, worker: 512 });
  });
});
