/**
 * The set-up of the gateway tests: one authority over roles shaped like the template's, the
 * gateways and services each test starts, all closed after the test.
 */
import { afterEach } from 'vitest';
import type { DeployedRole } from '../../../local/assembly/deployed-stack.ts';
import { IamAuthority } from '../../../local/iam/iam-authority.ts';
import { startIamGateway, type IamGatewayOptions } from '../../../local/iam/iam-gateway.ts';

export const ACCOUNT = '000000000000';
export const REGION = 'us-east-1';

/** A role named `name` with one policy of `statements`. */
export function role(name: string, statements: unknown[]): DeployedRole {
  return {
    logicalId: name,
    name,
    arn: `arn:aws:iam::${ACCOUNT}:role/${name}`,
    managedPolicyArns: [],
    policyDocuments: [{ name: `${name}DefaultPolicy`, document: { Version: '2012-10-17', Statement: statements } }],
  };
}

export const assumed = (roleName: string, session: string) => `arn:aws:sts::${ACCOUNT}:assumed-role/${roleName}/${session}`;

/** Registers clean-up for the file; `closeLater` takes anything with close(). */
export function useGatewayHarness() {
  const closers: Array<() => Promise<unknown> | unknown> = [];
  const warnings: string[] = [];
  const logger = { warn: (m: string) => warnings.push(m), error: (m: string) => warnings.push(m) };
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    warnings.length = 0;
  });
  return {
    warnings,
    closeLater<T extends { close(): Promise<unknown> | unknown }>(thing: T): T {
      closers.push(() => thing.close());
      return thing;
    },
    authority(roles: DeployedRole[]) {
      return new IamAuthority(roles, { logger });
    },
    async gateway(options: Omit<IamGatewayOptions, 'logger'>) {
      const gateway = await startIamGateway({ ...options, logger });
      closers.push(() => gateway.close());
      return gateway;
    },
  };
}
