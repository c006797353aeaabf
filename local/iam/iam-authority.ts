/**
 * The account's IAM, for one deployed stack: every role's identity policies (inline, attached,
 * and the AWS managed policies it names), the functions' resource policies, the temporary
 * credentials Lambda would hand each function, and a decision for every call, evaluated by
 * `@cloud-copilot/iam-simulate` and recorded with the statement that allowed it.
 */
import { createHash, createHmac, randomBytes } from 'node:crypto';
import type { DeployedRole, DeployedStack } from '../assembly/deployed-stack.ts';
import { managedPolicyDocument, type PolicyDocument } from './managed-policies.ts';
import { evaluate, type Evaluated, type StatementRef } from './policy-evaluation.ts';

export type { StatementRef };

/** The assumed-role session the local caller of an AWS_IAM Function URL signs as. */
export const LOCAL_CALLER_ROLE_NAME = 'async-mcp-local-caller';
export const LOCAL_CALLER_SESSION = 'local';

/** What a call asks IAM. */
export interface AuthorizationRequest {
  /** An assumed-role ARN (`arn:aws:sts::<account>:assumed-role/<role>/<session>`), a role ARN, or a service principal. */
  principalArn: string;
  action: string;
  resource: string;
  /** Request context keys, e.g. `lambda:FunctionUrlAuthType`. */
  context?: Record<string, string | string[]>;
}

/** Why a call was refused: the three endings of AWS's AccessDenied message. */
export type DenialReason = 'implicit' | 'explicit-identity' | 'explicit-resource';

export type AuthorizationResult = { allowed: true } | { allowed: false; reason: DenialReason /** AWS's exact AccessDenied wording. */; message: string };

/** One evaluated call. */
export interface Decision {
  /** The IAM role the principal is a session of (the principal itself for a service). */
  roleArn: string;
  principalArn: string;
  action: string;
  resource: string;
  allowed: boolean;
  /** The first identity statement that allowed it. */
  statement?: StatementRef;
  /** Every identity statement that allowed it. */
  statements?: StatementRef[];
  /** How many calls this decision answered. */
  count: number;
}

export interface IamAuthorityOptions {
  /** @default '000000000000' */
  accountId?: string;
  /** @default 'us-east-1' */
  region?: string;
  /** The functions' resource policies (AWS::Lambda::Permission). */
  permissions?: DeployedStack['permissions'];
  /** The functions the local caller may invoke through their URL. @default every function of the account */
  localCallerFunctionArns?: string[];
  /** Told about managed policies this runtime has no document for (they then grant nothing). @default console */
  logger?: Pick<Console, 'warn'>;
}

/** The credentials a role session signs with. */
export interface SessionCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken: string;
}

/** Who a key belongs to. */
export interface KeyIdentity {
  roleArn: string;
  assumedRoleArn: string;
  sessionName: string;
  secretAccessKey: string;
  /** Absent for the local caller, whose key is long-term. */
  sessionToken?: string;
}

interface Principal {
  roleArn: string;
  policies: Array<{ name: string; policy: PolicyDocument }>;
  /** Its policies test the clock, so a decision holds for this call only. */
  timeSensitive: boolean;
}

const TIME_KEYS = /aws:(CurrentTime|EpochTime)/i;
const EVALUATIONS_KEPT = 10_000;

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** The account's IAM for one stack; see the module comment. */
export class IamAuthority {
  readonly accountId: string;
  readonly region: string;
  readonly localCaller: {
    accessKeyId: 'local';
    secretAccessKey: 'local';
    assumedRoleArn: string;
    roleArn: string;
    userId: string;
    accountId: string;
  };
  private readonly rolesByName = new Map<string, Principal>();
  private readonly keys = new Map<string, KeyIdentity>();
  private readonly permissions: DeployedStack['permissions'];
  private readonly seed = randomBytes(32);
  private readonly logger: Pick<Console, 'warn'>;
  /** One entry per distinct decision, in the order first made. */
  private readonly recorded = new Map<string, Decision>();
  /** Evaluations by request: the simulator takes milliseconds, and a status poll makes one call. */
  private readonly evaluations = new Map<string, Evaluated>();

  constructor(roles: DeployedRole[], options: IamAuthorityOptions = {}) {
    this.accountId = options.accountId ?? '000000000000';
    this.region = options.region ?? 'us-east-1';
    this.permissions = options.permissions ?? [];
    const logger = options.logger ?? console;
    this.logger = logger;
    for (const role of roles) {
      const policies = role.policyDocuments.map((p) => ({ name: p.name, policy: p.document as PolicyDocument }));
      for (const arn of role.managedPolicyArns) {
        const document = managedPolicyDocument(arn);
        if (document) policies.push({ name: arn, policy: document });
        else logger.warn(`IAM: role ${role.name} names the managed policy ${arn}, which this runtime has no document for; it grants nothing here`);
      }
      this.rolesByName.set(role.name, { roleArn: role.arn, policies, timeSensitive: TIME_KEYS.test(JSON.stringify(policies)) });
    }

    const roleArn = `arn:aws:iam::${this.accountId}:role/${LOCAL_CALLER_ROLE_NAME}`;
    const functions = options.localCallerFunctionArns ?? [`arn:aws:lambda:${this.region}:${this.accountId}:function:*`];
    // What CDK's grantInvokeUrl grants: the URL invoke under AWS_IAM, and the invoke it implies.
    this.rolesByName.set(LOCAL_CALLER_ROLE_NAME, {
      roleArn,
      timeSensitive: false,
      policies: [
        {
          name: 'InvokeFunctionUrls',
          policy: {
            Version: '2012-10-17',
            Statement: [
              {
                Effect: 'Allow',
                Action: 'lambda:InvokeFunctionUrl',
                Resource: functions,
                Condition: { StringEquals: { 'lambda:FunctionUrlAuthType': 'AWS_IAM' } },
              },
              {
                Effect: 'Allow',
                Action: 'lambda:InvokeFunction',
                Resource: functions,
                Condition: { Bool: { 'lambda:InvokedViaFunctionUrl': 'true' } },
              },
            ],
          },
        },
      ],
    });
    const assumedRoleArn = assumedRole(this.accountId, LOCAL_CALLER_ROLE_NAME, LOCAL_CALLER_SESSION);
    this.localCaller = {
      accessKeyId: 'local',
      secretAccessKey: 'local',
      assumedRoleArn,
      roleArn,
      userId: `${roleId(roleArn)}:${LOCAL_CALLER_SESSION}`,
      accountId: this.accountId,
    };
    this.keys.set('local', { roleArn, assumedRoleArn, sessionName: LOCAL_CALLER_SESSION, secretAccessKey: 'local' });
  }

  /** Lambda-like session credentials that name the role: the gateways map the access key back to it. */
  credentialsFor(roleArn: string, sessionName: string): SessionCredentials {
    const roleName = roleNameOf(roleArn);
    const role = roleName === undefined ? undefined : this.rolesByName.get(roleName);
    if (!roleName || !role) throw new Error(`IAM: no role ${roleArn} in this stack`);
    const digest = createHash('sha256').update(`${roleArn}\0${sessionName}`).digest();
    const accessKeyId = `ASIA${base32(digest).slice(0, 16)}`;
    const secretAccessKey = createHmac('sha256', this.seed).update(`secret\0${accessKeyId}`).digest('base64').slice(0, 40);
    const sessionToken = `IQoJb3JpZ2luX2Vj${createHmac('sha512', this.seed).update(`token\0${accessKeyId}`).digest('base64')}`;
    this.keys.set(accessKeyId, {
      roleArn: role.roleArn,
      assumedRoleArn: assumedRole(this.accountId, roleName, sessionName),
      sessionName,
      secretAccessKey,
      sessionToken,
    });
    return { accessKeyId, secretAccessKey, sessionToken };
  }

  /** The session a key was issued for, or undefined for a key this account never issued. */
  identify(accessKeyId: string): KeyIdentity | undefined {
    return this.keys.get(accessKeyId);
  }

  /**
   * Evaluates a call as IAM does within one account: an explicit deny in an identity or resource
   * policy refuses it; otherwise an allow in either grants it. Every decision is recorded.
   */
  async authorize(request: AuthorizationRequest): Promise<AuthorizationResult> {
    const principal = this.principalFor(request.principalArn);
    const key = JSON.stringify([request.principalArn, request.action, request.resource, request.context ?? null]);
    let evaluated = principal?.timeSensitive ? undefined : this.evaluations.get(key);
    if (!evaluated) {
      const resourcePolicy = this.resourcePolicyFor(request.action, request.resource);
      evaluated = await evaluate(this.logger, {
        request: {
          principal: request.principalArn,
          action: request.action,
          resource: { resource: request.resource, accountId: this.accountId },
          contextVariables: { ...this.globalContext(request.principalArn, principal), ...request.context },
        },
        identityPolicies: principal?.policies ?? [],
        serviceControlPolicies: [],
        resourceControlPolicies: [],
        ...(resourcePolicy ? { resourcePolicy } : {}),
      });
      if (this.evaluations.size >= EVALUATIONS_KEPT) this.evaluations.clear();
      this.evaluations.set(key, evaluated);
    }
    const allowed = evaluated.result === 'Allowed';
    const roleArn = principal?.roleArn ?? request.principalArn;
    const decisionKey = JSON.stringify([roleArn, request.principalArn, request.action, request.resource, allowed]);
    const seen = this.recorded.get(decisionKey);
    if (seen) seen.count++;
    else {
      this.recorded.set(decisionKey, {
        roleArn,
        principalArn: request.principalArn,
        action: request.action,
        resource: request.resource,
        allowed,
        ...(evaluated.statements.length ? { statement: evaluated.statements[0], statements: evaluated.statements } : {}),
        count: 1,
      });
    }
    if (allowed) return { allowed: true };
    const reason: DenialReason = evaluated.result !== 'ExplicitlyDenied' ? 'implicit' : evaluated.deniedByResource ? 'explicit-resource' : 'explicit-identity';
    return { allowed: false, reason, message: accessDeniedMessage(request.principalArn, request.action, request.resource, reason) };
  }

  /** Every distinct call decided so far (with how often), and which statement allowed it: for the least-privilege report. */
  decisions(): ReadonlyArray<Decision> {
    return [...this.recorded.values()];
  }

  /** The roles' policies as evaluated (managed documents included), by role ARN. */
  policiesOf(roleArn: string): ReadonlyArray<{ name: string; policy: PolicyDocument }> {
    const name = roleNameOf(roleArn);
    return (name && this.rolesByName.get(name)?.policies) || [];
  }

  private principalFor(principalArn: string): Principal | undefined {
    const name = roleNameOf(principalArn);
    return name ? this.rolesByName.get(name) : undefined;
  }

  /** The function's resource policy, built from its AWS::Lambda::Permission resources. */
  private resourcePolicyFor(action: string, resource: string): PolicyDocument | undefined {
    if (!action.toLowerCase().startsWith('lambda:')) return undefined;
    const statements = this.permissions
      .filter((p) => p.functionArn === resource)
      .map((p, index) => ({
        Sid: `permission-${index}`,
        Effect: 'Allow',
        Principal: principalElement(p.principal, this.accountId),
        Action: p.action,
        Resource: p.functionArn,
        ...permissionCondition(p),
      }));
    return statements.length ? { Version: '2012-10-17', Statement: statements } : undefined;
  }

  /** The global keys AWS sets on every signed request of a role session. */
  private globalContext(principalArn: string, principal: Principal | undefined): Record<string, string> {
    const now = new Date();
    const context: Record<string, string> = {
      'aws:SecureTransport': 'true',
      'aws:CurrentTime': now.toISOString(),
      'aws:EpochTime': String(Math.floor(now.getTime() / 1000)),
      'aws:RequestedRegion': this.region,
    };
    if (principal) {
      context['aws:PrincipalArn'] = principal.roleArn;
      context['aws:PrincipalAccount'] = this.accountId;
      context['aws:PrincipalType'] = principalArn.includes(':assumed-role/') ? 'AssumedRole' : 'Role';
    }
    return context;
  }
}

/** AWS's AccessDenied wording for an identity-policy decision. `quoteResource`: S3 quotes the ARN. */
export function accessDeniedMessage(
  principalArn: string,
  action: string,
  resource: string,
  reason: DenialReason,
  options: { quoteResource?: boolean } = {},
): string {
  const on = options.quoteResource ? `"${resource}"` : resource;
  const why =
    reason === 'implicit'
      ? `because no identity-based policy allows the ${action} action`
      : reason === 'explicit-identity'
        ? 'with an explicit deny in an identity-based policy'
        : 'with an explicit deny in a resource-based policy';
  return `User: ${principalArn} is not authorized to perform: ${action} on resource: ${on} ${why}`;
}

/** `arn:aws:sts::<account>:assumed-role/<role>/<session>` */
export function assumedRole(accountId: string, roleName: string, sessionName: string): string {
  return `arn:aws:sts::${accountId}:assumed-role/${roleName}/${sessionName}`;
}

/** The role name of a role ARN (any path) or an assumed-role ARN. */
export function roleNameOf(arn: string): string | undefined {
  const assumed = /^arn:[a-z-]+:sts::\d{12}:assumed-role\/([^/]+)\/[^/]+$/.exec(arn);
  if (assumed) return assumed[1];
  const role = /^arn:[a-z-]+:iam::\d{12}:role\/(?:.*\/)?([^/]+)$/.exec(arn);
  return role?.[1];
}

function principalElement(principal: string, accountId: string): unknown {
  if (principal === '*') return '*';
  if (/^\d{12}$/.test(principal)) return { AWS: `arn:aws:iam::${principal}:root` };
  if (principal.startsWith('arn:')) return { AWS: principal };
  return { Service: principal || accountId };
}

function permissionCondition(p: DeployedStack['permissions'][number]): { Condition?: Record<string, Record<string, string>> } {
  const condition: Record<string, Record<string, string>> = {};
  if (p.functionUrlAuthType) condition.StringEquals = { 'lambda:FunctionUrlAuthType': p.functionUrlAuthType };
  if (p.sourceArn) condition.ArnLike = { 'aws:SourceArn': p.sourceArn };
  return Object.keys(condition).length ? { Condition: condition } : {};
}

/** IAM role ids: `AROA` and 17 characters, here derived from the ARN. */
function roleId(roleArn: string): string {
  return `AROA${base32(createHash('sha256').update(roleArn).digest()).slice(0, 17)}`;
}

function base32(bytes: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of bytes) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  return out;
}
