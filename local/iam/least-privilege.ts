/**
 * Least privilege, measured: every (action, resource) a role's own policy statements grant that no
 * recorded call used. A grant nothing exercises either goes, or is listed with the reason it stays.
 */
import { DURABLE_FUNCTION_ALIAS, DURABLE_FUNCTION_ARN_PREFIX_ENV, toolDurableFunctionArns } from '../../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV, toolStateMachineArns } from '../../lambdas/tools/state-machine-names.ts';
import type { DeployedRole, DeployedStack } from '../assembly/deployed-stack.ts';
import type { Decision } from './iam-authority.ts';

/** One action on one resource pattern of one Allow statement that no decision used. */
export interface UnusedGrant {
  roleLogicalId: string;
  roleArn: string;
  policy: string;
  sid?: string;
  /** 0-based position in the policy's Statement array. */
  index: number;
  /** As written in the statement (may hold wildcards). */
  action: string;
  resource: string;
}

/** A grant known to go unused in the measured runs, and why it stays. */
export interface ExpectedUnusedGrant {
  /** The role's logical id; `*` wildcards allowed. */
  role: string;
  action: string;
  /** @default any resource */
  resource?: string;
  reason: string;
  /** A grant some runs use and others do not (a race decides which function makes the call): never reported stale. */
  sometimesUsed?: boolean;
}

/**
 * The grants of `roles`' own policies (AWS managed policies are not ours to trim) that no allowed
 * decision of that role used: a decision uses a grant when the statement allowed it and its
 * action and resource match the grant's patterns.
 */
export function unusedGrants(roles: DeployedRole[], decisions: ReadonlyArray<Decision>): UnusedGrant[] {
  const unused: UnusedGrant[] = [];
  for (const role of roles) {
    const allowed = decisions.filter((d) => d.allowed && d.roleArn === role.arn);
    for (const { name, document } of role.policyDocuments) {
      document.Statement.forEach((raw, index) => {
        const statement = raw as { Sid?: string; Effect?: string; Action?: unknown; Resource?: unknown };
        // NotAction / NotResource grants have no finite list to check; Deny grants nothing.
        if (statement.Effect !== 'Allow' || statement.Action === undefined || statement.Resource === undefined) return;
        const used = allowed.filter((d) => (d.statements ?? []).some((s) => s.policy === name && s.index === index));
        for (const action of strings(statement.Action)) {
          for (const resource of strings(statement.Resource)) {
            const exercised = used.some((d) => globMatches(action, d.action, true) && globMatches(resource, d.resource, false));
            if (!exercised) {
              unused.push({
                roleLogicalId: role.logicalId,
                roleArn: role.arn,
                policy: name,
                ...(statement.Sid ? { sid: statement.Sid } : {}),
                index,
                action,
                resource,
              });
            }
          }
        }
      });
    }
  }
  return unused;
}

/**
 * The roles flows that run exactly `tools` can measure: every role of the stack but those of
 * the other tools' state machines, of the workers only those machines call, and of the other
 * durable tools' functions. A tool folder
 * the flows do not know (one a user added) has no flow to use its grants, so they would all
 * read as unused; its grants follow from its own folder by the same rules as the measured
 * tools', which the template test checks for every folder. A tool in `tools` that the stack
 * does not deploy is an error, so the list cannot go stale unnoticed.
 */
export function rolesForTools(model: Pick<DeployedStack, 'roles' | 'stateMachines' | 'functions'>, tools: readonly string[]): DeployedRole[] {
  const prefixes = [...new Set(model.functions.flatMap((fn) => fn.environment[STATE_MACHINE_ARN_PREFIX_ENV] ?? []))];
  const [prefix] = prefixes;
  if (prefix === undefined || prefixes.length !== 1) throw new Error(`expected one function with ${STATE_MACHINE_ARN_PREFIX_ENV}, found ${prefixes.length}`);
  const arnOf = toolStateMachineArns(prefix);
  const measuredArns = new Set(tools.map(arnOf));
  // A durable tool is its function (invoked through its alias), which runs under a role of its own.
  const durablePrefixes = [...new Set(model.functions.flatMap((fn) => fn.environment[DURABLE_FUNCTION_ARN_PREFIX_ENV] ?? []))];
  if (durablePrefixes.length > 1) throw new Error(`expected at most one ${DURABLE_FUNCTION_ARN_PREFIX_ENV}, found ${durablePrefixes.length}`);
  const durableArnOf = durablePrefixes[0] === undefined ? undefined : toolDurableFunctionArns(durablePrefixes[0]);
  const durableTools = model.functions.filter((fn) => fn.durable && durablePrefixes[0] !== undefined && fn.arn.startsWith(durablePrefixes[0]));
  const durableOf = (tool: string) => durableTools.find((fn) => `${fn.arn}:${DURABLE_FUNCTION_ALIAS}` === durableArnOf?.(tool));
  for (const tool of tools) {
    if (!model.stateMachines.some((machine) => machine.arn === arnOf(tool)) && !durableOf(tool))
      throw new Error(`the stack deploys no state machine for tool ${tool}, nor a durable function`);
  }
  const measuredDurable = new Set(tools.map((tool) => durableOf(tool)?.logicalId));
  const toolMachines = model.stateMachines.filter((machine) => machine.arn.startsWith(prefix));
  const measured = toolMachines.filter((machine) => measuredArns.has(machine.arn));
  const others = toolMachines.filter((machine) => !measuredArns.has(machine.arn));
  // A definition names a worker by its ARN, qualified with a version or alias.
  const calls = (machine: { definition: string }, functionArn: string) => new RegExp(`${escapeRegExp(functionArn)}(?![\\w-])`).test(machine.definition);
  const unmeasured = new Set([
    ...others.map((machine) => machine.roleArn),
    ...durableTools.filter((fn) => !measuredDurable.has(fn.logicalId)).map((fn) => fn.roleArn),
  ]);
  for (const fn of model.functions) {
    if (others.some((machine) => calls(machine, fn.arn)) && !measured.some((machine) => calls(machine, fn.arn))) unmeasured.add(fn.roleArn);
  }
  return model.roles.filter((role) => !unmeasured.has(role.arn));
}

/** The unused grants no expectation explains: what a least-privilege test fails on. */
export function unexpectedUnusedGrants(unused: UnusedGrant[], expected: ExpectedUnusedGrant[]): UnusedGrant[] {
  return unused.filter(
    (grant) =>
      !expected.some(
        (e) =>
          globMatches(e.role, grant.roleLogicalId, false) &&
          globMatches(e.action, grant.action, true) &&
          (e.resource === undefined || globMatches(e.resource, grant.resource, false)),
      ),
  );
}

/** One line per grant, for a failing assertion's message. */
export function describeUnusedGrants(unused: UnusedGrant[]): string {
  return unused.map((g) => `${g.roleLogicalId} ${g.policy}#${g.index}${g.sid ? ` (${g.sid})` : ''}: ${g.action} on ${g.resource}`).join('\n');
}

/** IAM's wildcard match: `*` any run of characters, `?` one; actions compare case-insensitively. */
export function globMatches(pattern: string, value: string, ignoreCase: boolean): boolean {
  const source = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`, ignoreCase ? 'is' : 's').test(value);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function strings(value: unknown): string[] {
  return (Array.isArray(value) ? value : [value]).filter((v): v is string => typeof v === 'string');
}
