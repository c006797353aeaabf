/**
 * A user's own tool folder must not break the as-deployed least-privilege test (issue 28: with
 * the README's word_count added, "unused grants … wordcountStateMachineRole …
 * lambda:InvokeFunction"). That test's flows run the repository's tools, so it measures their
 * roles: `rolesForTools` leaves out the state machine role of any other tool and the roles of
 * workers only such tools call. Read from the as-deployed tests' own assembly (no synth of its own).
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
  // Durable tools are the catalog's too: left out of `tools`, their roles would count as held out.
  tools = [
    ...model.stateMachines.filter((machine) => machine.arn.startsWith(machinePrefix)).map((machine) => machine.arn.slice(machinePrefix.length)),
    ...model.functions.filter((fn) => fn.durable && fn.arn.startsWith(durablePrefix)).map((fn) => fn.arn.slice(durablePrefix.length)),
  ];
}, 600_000);

/** The logical ids of the roles left out when the flows run every tool but `heldOut`. */
function leftOutWithout(heldOut: string): string[] {
  const measured = rolesForTools(
    model,
    tools.filter((tool) => tool !== heldOut),
  );
  return model.roles
    .filter((role) => !measured.includes(role))
    .map((role) => role.logicalId)
    .sort();
}

describe('the roles a least-privilege run measures', () => {
  it('are every role of the stack when the flows run every tool', () => {
    expect(tools).toEqual(expect.arrayContaining(['analyze_dataset', 'export_dataset', 'quick_calculation', 'summarize_numbers']));
    expect(rolesForTools(model, tools)).toEqual(model.roles);
  });

  it("leave out a tool the flows do not run: its state machine's role and the role of a worker only it calls", () => {
    expect(leftOutWithout('export_dataset')).toEqual([
      expect.stringMatching(/^WorkersexportdatasetRole/),
      expect.stringMatching(/^exportdatasetStateMachineRole/),
    ]);
  });

  it('keep the role of a worker a measured tool calls too', () => {
    // quick_calculation's worker, calculate, also serves summarize_numbers.
    expect(leftOutWithout('quick_calculation')).toEqual([expect.stringMatching(/^quickcalculationStateMachineRole/)]);
  });

  it('keep the server and status-sync roles, whatever the tools', () => {
    const measured = rolesForTools(model, []).map((role) => role.logicalId);
    expect(measured).toEqual(expect.arrayContaining([expect.stringMatching(/^ServerMcpRole/), expect.stringMatching(/^ServerStatusSyncHandlerRole/)]));
    expect(measured.some((id) => /StateMachineRole/.test(id))).toBe(false);
  });

  it('refuse a tool the stack does not deploy, so a list of flows cannot go stale unnoticed', () => {
    expect(() => rolesForTools(model, [...tools, 'word_count'])).toThrow(/no state machine for tool word_count/);
  });
});
