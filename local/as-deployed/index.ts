/**
 * The as-deployed runtime's one entry point: what `npm start -- --cdk-out DIR` and
 * `--as-deployed` run, and what tests, benches and scripts that start or inspect it import.
 * It is built from four folders (local/README.md says what each emulates and where it differs
 * from AWS):
 * - `assembly/` reads a cloud assembly into a `DeployedStack`: resolved templates, physical
 *   names, roles, functions, state machines, queues, the event rule and the Function URL;
 * - `lambda/` runs each function's bundled asset in a sandbox of its own, and serves the
 *   Function URL (payload limit, CORS, AWS_IAM auth);
 * - `iam/` issues each role's credentials, verifies SigV4, and puts an IAM-enforcing gateway
 *   in front of every local AWS endpoint; Step Functions Tasks are authorized as the machine's role;
 * - `as-deployed/` starts them all together (start-deployed-stack.ts), with the event rule's
 *   retries and dead-letter queue, the functions' logs, and the durable functions' executions in
 *   the local durable service (`../durable/`), each invocation in the function's sandbox.
 * Import from here; the modules behind it are free to move.
 */
export type { DeployedFunction, DeployedRole, DeployedStack } from '../assembly/deployed-stack.ts';
export { AssemblyError } from '../assembly/assembly-error.ts';
export { loadDeployedStack } from '../assembly/build-deployed-stack.ts';
export { readCloudAssembly } from '../assembly/read-cloud-assembly.ts';
export { IamAuthority, assumedRole } from '../iam/iam-authority.ts';
export {
  describeUnusedGrants,
  rolesForTools,
  unexpectedUnusedGrants,
  unusedGrants,
  type ExpectedUnusedGrant,
  type UnusedGrant,
} from '../iam/least-privilege.ts';
export { serveFunctionUrl } from '../lambda/function-url-server.ts';
export { LambdaFunctionError, startLocalFunction, type LocalFunction } from '../lambda/local-function.ts';
export { deadLetterFolder, type DeadLetter, type DeadLetterQueue } from './dead-letter-queue.ts';
export { differencesFromAws, runDeployedFromCli, type DeployedCliOptions } from './run-deployed-cli.ts';
export { ASSEMBLY_RECORD, DEFAULT_HOST, DEFAULT_PORT, startDeployedStack, type DeployedLocalStack, type DeployedStackOptions } from './start-deployed-stack.ts';
export { synthesizeAssembly, type SynthesizeOptions } from './synthesize-assembly.ts';
