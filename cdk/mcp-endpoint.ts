/**
 * The MCP side of AsyncMcpServer: the MCP Lambda (the tool folders and the operation card in
 * its asset), what its role may do, and the Function URL clients call, with the auth the
 * `auth` prop chooses (mcp-auth.ts).
 *
 * A part of the server, not a construct of its own: the function sits in the server's scope
 * under the id it always had (`Mcp`), so its logical ids stay.
 */
import { Annotations, Duration } from 'aws-cdk-lib';
import type { Grant, IGrantable } from 'aws-cdk-lib/aws-iam';
import { type FunctionUrl, type FunctionUrlAuthType, InvokeMode } from 'aws-cdk-lib/aws-lambda';
import type { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { Construct } from 'constructs';
import { ENV } from '../lambdas/handlers/environment.ts';
import { requestTimeoutSeconds } from '../lambdas/operations/operations-limits.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../lambdas/tools/state-machine-names.ts';
import { BundledFunction } from './bundled-function.ts';
import { type McpAuth, mcpCorsOptions, resolveMcpAuth } from './mcp-auth.ts';
import { operationCardEnvironment, writeOperationCard } from './operation-card-asset.ts';
import type { OperationsTable } from './operations-table.ts';
import { MCP_HTTP_ENTRY } from './repo-paths.ts';
import type { ResultsBucket } from './results-bucket.ts';
import type { ServerKey } from './server-key.ts';
import type { ServerSettings } from './server-settings.ts';
import { BUNDLED_TOOLS_DIR, LAMBDA_TASK_ROOT, copyToolFiles, toolFileManifest } from './tool-asset-commands.ts';
import type { ToolMachines } from './tool-machines.ts';

export interface McpEndpointProps {
  readonly settings: ServerSettings;
  /** The `auth` prop. @default { kind: 'iam' } */
  readonly auth?: McpAuth;
  /** The deprecated `functionUrlAuthType` prop. */
  readonly functionUrlAuthType?: FunctionUrlAuthType;
  /** @default - no CORS */
  readonly corsAllowedOrigins?: readonly string[];
  readonly operations: OperationsTable;
  readonly results: ResultsBucket;
  readonly serverKey: ServerKey;
  readonly machines: ToolMachines;
}

export class McpEndpoint {
  /** The MCP Lambda (Function URL payload v2, response streaming). */
  public readonly function: NodejsFunction;
  /** Invoke mode RESPONSE_STREAM, so server-sent events reach the client as they are written. */
  public readonly url: FunctionUrl;
  /** Who may call (an IAM server's `principalScope` filled in). */
  public readonly auth: McpAuth;

  /** `scope` is the server: the function's id and the auth warnings are its. */
  constructor(scope: Construct, props: McpEndpointProps) {
    const { settings, operations, results, serverKey, machines } = props;
    const access = resolveMcpAuth(props.auth, props.functionUrlAuthType, scope);
    this.auth = access.auth;
    const { tools } = settings;
    const operationCard = settings.mcp.operationCard;
    const mcp = new BundledFunction(scope, 'Mcp', {
      entry: MCP_HTTP_ENTRY,
      description: 'async-mcp MCP server (Function URL)',
      memorySize: 1024,
      timeout: Duration.seconds(requestTimeoutSeconds(settings.maxBlockingSeconds)),
      environment: {
        ...operationCardEnvironment(MCP_HTTP_ENTRY, operationCard),
        [ENV.tableName]: operations.tableName,
        [STATE_MACHINE_ARN_PREFIX_ENV]: machines.stateMachineArnPrefix,
        [DURABLE_FUNCTION_ARN_PREFIX_ENV]: machines.durableFunctionArnPrefix,
        [ENV.toolsDir]: `${LAMBDA_TASK_ROOT}/${BUNDLED_TOOLS_DIR}`,
        [ENV.resultsBucket]: results.bucket.bucketName,
        [ENV.secretArn]: serverKey.secret.secretArn,
        ...settings.limitsEnvironment,
        [ENV.handleTools]: settings.mcp.handleTools ? '1' : '0',
        [ENV.listen]: settings.mcp.listen ? '1' : '0',
        ...access.environment,
      },
      logRetention: settings.logRetention,
      tracing: settings.tracing,
      reservedConcurrentExecutions: settings.mcp.reservedConcurrency,
      // The operation card, built into the asset beside the bundle, then the tool folders the function reads.
      afterBundling: {
        key: { operationCard, tools: toolFileManifest(tools) },
        write: (outputDir) => {
          writeOperationCard(MCP_HTTP_ENTRY, outputDir, operationCard);
          copyToolFiles(tools, outputDir);
        },
      },
    });
    this.function = mcp.function;

    operations.grantRecordAccess(this.function);
    // It serves resources/read, and spills a large output when a status read settles an operation.
    results.grantReadResults(this.function);
    results.grantWriteResults(this.function);
    serverKey.grantRead(this.function);
    machines.grantCallerAccess(this.function);

    // Streaming, not BUFFERED: a server-to-client request or a progress notification written to an
    // SSE stream must reach the client while the call waits, not when the response ends.
    this.url = this.function.addFunctionUrl({
      authType: access.urlAuthType,
      invokeMode: InvokeMode.RESPONSE_STREAM,
      ...(props.corsAllowedOrigins ? { cors: mcpCorsOptions(props.corsAllowedOrigins, tools) } : {}),
    });
    if (this.auth.kind === 'none') {
      Annotations.of(scope).addWarningV2(
        'async-mcp:function-url-auth-none',
        "The MCP Function URL has auth type NONE and no OAuth: anyone who learns the URL can call every tool. Use it for trials only; the default is auth { kind: 'iam' }.",
      );
    }
  }

  /**
   * Lets `grantee` call the endpoint of an `iam` server: `lambda:InvokeFunctionUrl` for an
   * `AWS_IAM` URL, and `lambda:InvokeFunction` only with `lambda:InvokedViaFunctionUrl = true`.
   * Plain `lambda:InvokeFunction` would let the grantee invoke the function directly with a
   * hand-made event naming any caller, and so act as anyone. A grantee in another account gets
   * both statements in the function's resource policy; it still needs its own identity policy.
   */
  public grantInvoke(grantee: IGrantable): Grant {
    if (this.auth.kind !== 'iam') {
      throw new Error(`grantInvoke is for an IAM-authenticated server; this one has auth kind '${this.auth.kind}', whose callers need no IAM grant`);
    }
    return this.function.grantInvokeUrl(grantee);
  }
}
