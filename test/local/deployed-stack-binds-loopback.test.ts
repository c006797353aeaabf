/**
 * The as-deployed stack (`--cdk-out`, `--as-deployed`): `--host` is the address of the MCP
 * endpoint (the Function URL) only. The local AWS endpoints and the IAM gateways in front of them,
 * which hold every role's credentials, listen on 127.0.0.1 whatever `--host` says, as the
 * endpoints of `npm start` do (local-endpoints-bind-loopback.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DeployedLocalStack } from '../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../support/deployed-assembly.ts';

let stack: DeployedLocalStack | undefined;

beforeAll(async () => {
  // "localhost" rather than a wildcard address: a test binds loopback only.
  ({ stack } = await startAssemblyStack(await deployedAssembly(NO_AUTH), { host: 'localhost' }));
}, 240_000);
afterAll(async () => {
  await stack?.close();
});

describe('the as-deployed stack given --host', () => {
  it('serves the MCP endpoint on that host, and every AWS endpoint and IAM gateway on 127.0.0.1', () => {
    const deployed = stack!;
    expect(deployed.url.hostname).toBe('localhost');
    const gateways = Object.entries(deployed.gateways).map(([service, endpoint]) => [`${service} gateway`, endpoint]);
    const services = {
      'Step Functions facade': deployed.sfnEndpoint,
      dynalite: deployed.dynamo.endpoint,
      s3rver: deployed.results.endpoint,
      SQS: deployed.sqs.endpoint,
    };
    const endpoints: Record<string, string> = { ...Object.fromEntries(gateways), ...services };
    const hosts = Object.fromEntries(Object.entries(endpoints).map(([name, endpoint]) => [name, new URL(endpoint).hostname]));
    expect(hosts).toEqual(Object.fromEntries(Object.keys(endpoints).map((name) => [name, '127.0.0.1'])));
  });
});
