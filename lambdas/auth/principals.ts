/**
 * Principal names. Each names its kind (`iam:`, `oauth:`), so an IAM caller and an OAuth
 * subject that happen to share a name never share records.
 */

/**
 * An OAuth principal: issuer and subject (OpenID Connect Core §2: `sub` is unique only within
 * its issuer). The issuer is checked to have no fragment, so the first `#` splits the two.
 */
export function oauthPrincipal(issuer: string, subject: string): string {
  return `oauth:${issuer}#${subject}`;
}

/** An IAM principal from the caller's ARN (pass it through `roleOfAssumedRole` first to key by role). */
export function iamPrincipal(arn: string): string {
  return `iam:${arn}`;
}

// arn:<partition>:sts::<account>:assumed-role/<role name>/<session name>
const ASSUMED_ROLE = /^arn:([a-z][a-z0-9-]*):sts::(\d{12}):assumed-role\/([^/]+)\/.+$/;

/**
 * IAM Identity Center's roles, one per permission set and account
 * (`AWSReservedSSO_<permission set>_<hash>`): every user given that permission set assumes
 * the same role, and the session name is the user's own name, which they cannot choose.
 */
export const IDENTITY_CENTER_ROLE_PREFIX = 'AWSReservedSSO_';

/** The role name of an assumed-role session ARN; undefined for any other ARN. */
export function assumedRoleName(arn: string): string | undefined {
  return ASSUMED_ROLE.exec(arn)?.[3];
}

/**
 * Whether the sessions of role `roleName` are people, so each session is its own principal:
 * IAM Identity Center roles, and the roles named in `personRoles` (exact names, or a prefix
 * ending in `*`), such as roles people assume with web identity (OIDC) or SAML.
 */
export function isPersonRole(roleName: string, personRoles: readonly string[] = []): boolean {
  if (roleName.startsWith(IDENTITY_CENTER_ROLE_PREFIX)) return true;
  return personRoles.some((pattern) => (pattern.endsWith('*') ? roleName.startsWith(pattern.slice(0, -1)) : roleName === pattern));
}

/**
 * A Cognito identity pool user behind a role: every such user's session has the same name
 * (`CognitoIdentityCredentials`), so the identity id, which Cognito sets, tells them apart.
 * Role names cannot hold `#`, so the key is unambiguous.
 */
export function cognitoIdentityPrincipal(roleArn: string, identityId: string): string {
  return iamPrincipal(`${roleArn}#cognito-identity:${identityId}`);
}

/**
 * The role behind an assumed-role session, so a client whose credentials are refreshed
 * (a new session name) keeps its operations:
 * `arn:aws:sts::<acct>:assumed-role/<Role>/<session>` → `arn:aws:iam::<acct>:role/<Role>`.
 *
 * The STS ARN does not carry the role's path, so a role created as `/service-role/<Role>`
 * maps to `arn:aws:iam::<acct>:role/<Role>`, which is not its exact ARN. As a key it is
 * still unambiguous: role names are unique within an account whatever their path.
 * Every other ARN (IAM users, federated users, the account root) is returned unchanged.
 */
export function roleOfAssumedRole(arn: string): string {
  const match = ASSUMED_ROLE.exec(arn);
  if (!match) return arn;
  const [, partition, account, role] = match;
  return `arn:${partition}:iam::${account}:role/${role}`;
}
