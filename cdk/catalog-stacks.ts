/**
 * The nested stacks that hold what grows with the catalog: the tools' state machines and
 * durable functions (with their roles, log groups and failure-rate alarms) and the worker
 * Lambdas. One stack may hold 500 resources and a 1 MB template; a state machine tool takes
 * about 4.3 resources and 7 KB, a durable one about 6.3 (its version and alias too), so a
 * hundred tools filled the one stack there was. Each name goes to the stack its hash picks, never
 * to "the next one with room": a stack's contents then stay put when tools come and go. A
 * state machine that moved from one stack to another would be created in its new stack
 * before CloudFormation deletes it from its old one, and Step Functions refuses a second
 * machine of the same name, so the deploy would fail.
 */
import { createHash } from 'node:crypto';
import { CfnResource, NestedStack, Stack } from 'aws-cdk-lib';
import type { Construct, IValidation } from 'constructs';

/** Nested stacks for the tools' state machines: 300 copies of a small tool put at most about 50 in one. */
export const DEFAULT_TOOL_STACK_COUNT = 8;
/** Nested stacks for the worker Lambdas (about 7 resources each). */
export const DEFAULT_WORKER_STACK_COUNT = 4;
/**
 * Resources one nested stack may hold here, below CloudFormation's 500, so a stack near
 * it fails the synth with a way out instead of a deploy.
 */
export const MAX_RESOURCES_PER_NESTED_STACK = 400;
/** Bytes of state machine definitions one nested stack may hold, well below the 1 MB template. */
export const MAX_DEFINITION_BYTES_PER_NESTED_STACK = 600 * 1024;

/** Which of `count` stacks holds `name`: a hash of the name, so it never depends on the other names. */
export function catalogStackIndex(name: string, count: number): number {
  return createHash('sha256').update(name).digest().readUInt32BE(0) % count;
}

export interface CatalogStacksProps {
  /** How many nested stacks the names spread over; changing it moves names between stacks. */
  readonly count: number;
  /** What the stacks hold, for their description and the errors ("tool state machines"). */
  readonly holds: string;
  /** The server prop that sets `count`, named in the error when a stack is too full. */
  readonly countProp: string;
}

/** Up to `count` nested stacks, each made when the first name hashes to it. */
export class CatalogStacks {
  private readonly stacks = new Map<number, NestedStack>();
  private readonly definitionBytes = new Map<NestedStack, number>();

  constructor(
    private readonly scope: Construct,
    private readonly idPrefix: string,
    private readonly props: CatalogStacksProps,
  ) {
    if (!Number.isInteger(props.count) || props.count < 1) throw new Error(`${props.countProp} must be a positive whole number, got ${props.count}`);
  }

  /** The nested stack that holds `name`. */
  public stackFor(name: string): NestedStack {
    const index = catalogStackIndex(name, this.props.count);
    let stack = this.stacks.get(index);
    if (!stack) {
      stack = new NestedStack(this.scope, `${this.idPrefix}${index}`, {
        description: `async-mcp: ${this.props.holds} (${index + 1} of up to ${this.props.count})`,
      });
      stack.node.addValidation(this.budget(stack));
      this.stacks.set(index, stack);
    }
    return stack;
  }

  /** Counts a state machine definition towards its stack's size budget. */
  public addDefinitionBytes(stack: NestedStack, bytes: number): void {
    this.definitionBytes.set(stack, (this.definitionBytes.get(stack) ?? 0) + bytes);
  }

  /** The nested stacks made so far, by index. */
  public all(): NestedStack[] {
    return [...this.stacks].sort(([a], [b]) => a - b).map(([, stack]) => stack);
  }

  private budget(stack: NestedStack): IValidation {
    const { holds, countProp, count } = this.props;
    const tooFull = (what: string) =>
      `The nested stack of ${holds} ${stack.node.id} holds ${what}. Raise ${countProp} (now ${count}) to spread them over more stacks; ` +
      'this moves some of them to other stacks, so first drain and remove the tools that move, or deploy into a new stack.';
    return {
      validate: () => {
        const errors: string[] = [];
        const resources = stack.node.findAll().filter((c) => CfnResource.isCfnResource(c) && Stack.of(c) === stack).length;
        if (resources > MAX_RESOURCES_PER_NESTED_STACK) errors.push(tooFull(`${resources} resources, more than ${MAX_RESOURCES_PER_NESTED_STACK}`));
        const bytes = this.definitionBytes.get(stack) ?? 0;
        if (bytes > MAX_DEFINITION_BYTES_PER_NESTED_STACK)
          errors.push(tooFull(`${Math.round(bytes / 1024)} KB of definitions, more than ${MAX_DEFINITION_BYTES_PER_NESTED_STACK / 1024} KB`));
        return errors;
      },
    };
  }
}
