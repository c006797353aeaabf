/**
 * `tool.json` `permissions`: IAM policy statements granted to that tool's state machine
 * role only (its AWS service integrations need them). Checked offline for shape; a `*`
 * anywhere in Action or Resource needs a `reason`, which the CDK construct records as
 * the cdk-nag acknowledgement of that wildcard.
 */
import * as z from 'zod';

/** Pseudo parameters a Resource may name as `${AWS::...}`; CloudFormation substitutes them. */
export const RESOURCE_PSEUDO_PARAMETERS = ['AWS::Partition', 'AWS::Region', 'AWS::AccountId', 'AWS::URLSuffix'] as const;

const ACTION = /^(\*|[a-z0-9-]+:[A-Za-z0-9*?]+)$/;
const PLACEHOLDER = /\$\{([^}]*)\}/g;

const oneOrMore = <T extends z.ZodType>(item: T) => z.union([item, z.array(item).min(1)]);

const action = z.string().regex(ACTION, 'an action is "<service>:<Action>" (wildcards * and ? allowed), or "*"');
const resource = z
  .string()
  .min(1)
  .refine((value) => value === '*' || value.startsWith('arn:'), 'a resource is an ARN or "*"')
  .refine(
    (value) => [...value.matchAll(PLACEHOLDER)].every((m) => (RESOURCE_PSEUDO_PARAMETERS as readonly string[]).includes(m[1] ?? '')),
    `a resource may substitute only \${${RESOURCE_PSEUDO_PARAMETERS.join('}, ${')}}`,
  );
const conditionValue = z.union([z.string(), z.number(), z.boolean()]);

/** One statement. `reason` is ours, not IAM's: it is removed before the statement reaches IAM. */
export const PermissionStatementSchema = z
  .strictObject({
    Sid: z
      .string()
      .regex(/^[A-Za-z0-9]*$/, 'a Sid is letters and digits only')
      .optional(),
    Effect: z.enum(['Allow', 'Deny']),
    Action: oneOrMore(action),
    Resource: oneOrMore(resource),
    Condition: z.record(z.string().min(1), z.record(z.string().min(1), oneOrMore(conditionValue))).optional(),
    reason: z.string().trim().min(10, 'a reason says in a sentence why the wildcard is needed').optional(),
  })
  .superRefine((statement, ctx) => {
    const wildcards = wildcardsOf(statement);
    if (wildcards.length > 0 && statement.reason === undefined) {
      ctx.addIssue({
        code: 'custom',
        path: ['reason'],
        message: `${wildcards.map((w) => `"${w}"`).join(', ')} contains a wildcard: add "reason" saying why this statement needs it`,
      });
    }
  });
export type PermissionStatement = z.infer<typeof PermissionStatementSchema>;

export const PermissionsSchema = z.array(PermissionStatementSchema);

/** The statement's actions and resources that contain `*`. */
export function wildcardsOf(statement: Pick<PermissionStatement, 'Action' | 'Resource'>): string[] {
  return [...asList(statement.Action), ...asList(statement.Resource)].filter((value) => value.includes('*'));
}

export function asList<T>(value: T | T[]): T[] {
  return Array.isArray(value) ? value : [value];
}
