/**
 * A durable tool is its function, which runs under a role of its own: flows that do not run the
 * tool cannot use that role's grants, so `rolesForTools` leaves it out, as it leaves out a state
 * machine tool's role. Read from the as-deployed tests' own assembly (no synth of its own).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../../../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../../../lambdas/tools/state-machine-names.ts';
import { loadDeployedStack } from '../../../local/assembly/build-deployed-stack.ts';
import type { DeployedStack } from '../../../local/assembly/deployed-stack.ts';
import { rolesForTools } from '../../../local/iam/least-privilege.ts';
import { deployedAssembly, NO_AUTH } from '../../support/deployed-assembly.ts';

let model: DeployedStack;
let tools: string[];

beforeAll(async () => {
  model = loadDeployedStack(await deployedAssembly(NO_AUTH));
  const prefixOf = (env: string) => model.functions.find((fn) => fn.environment[env])?.environment[env] ?? '';
  const machinePrefix = prefixOf(STATE_MACHINE_ARN_PREFIX_ENV);
  const durablePrefix = prefixOf(DURABLE_FUNCTION_ARN_PREFIX_ENV);
  tools = [
    ...model.stateMachines.filter((machine) => machine.arn.startsWith(machinePrefix)).map((machine) => machine.arn.slice(machinePrefix.length)),
    ...model.functions.filter((fn) => fn.durable && fn.arn.startsWith(durablePrefix)).map((fn) => fn.arn.slice(durablePrefix.length)),
  ];
}, 600_000);

const leftOutWithout = (heldOut: string) => {
  const measured = rolesForTools(
    model,
    tools.filter((tool) => tool !== heldOut),
  );
  return model.roles
    .filter((role) => !measured.includes(role))
    .map((role) => role.logicalId)
    .sort();
};

describe('the roles a least-privilege run measures, with durable tools', () => {
  it('are every role of the stack when the flows run every tool, durable ones included', () => {
    expect(tools).toEqual(expect.arrayContaining(['analyze_dataset', 'count_primes_durable', 'approve_deployment_durable']));
    expect(rolesForTools(model, tools)).toEqual(model.roles);
  });

  it("leave out a durable tool the flows do not run: its function's role, and no other", () => {
    expect(leftOutWithout('count_primes_durable')).toEqual([expect.stringMatching(/^countprimesdurableHandlerRole/)]);
  });
});
