/**
 * With the construct's tracing setting (OpenTelemetry's environment in a Lambda runtime), the
 * MCP function, status sync and webhook delivery export their spans before an invocation
 * returns: each handler module runs in a process of its own over the local stand-ins
 * (dynalite, Secrets Manager, a webhook receiver), is invoked once, and its process exits the
 * moment the invocation settles, as a frozen container would stop. The batch processor's own
 * timer is pushed past the test, so only the flush at the invocation's end can have sent what
 * the OTLP receiver holds. A collector that fails, is gone or hangs fails no invocation.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MCP_HTTP_ENTRY, REPO_ROOT, STATUS_SYNC_ENTRY } from '../../cdk/repo-paths.ts';
import { DynamoDbWebhookSubscriptions } from '../../lambdas/aws/dynamodb-webhook-subscriptions.ts';
import { secretBoxFor } from '../../lambdas/events/secret-box.ts';
import { generateWebhookSecret } from '../../lambdas/events/webhooks/webhook-secret.ts';
import { ENV } from '../../lambdas/handlers/environment.ts';
import { INVOCATION_FLUSH_BOUND_MS } from '../../lambdas/observability/traced-lambda-handler.ts';
import { DURABLE_FUNCTION_ARN_PREFIX_ENV } from '../../lambdas/tools/durable-function-names.ts';
import { STATE_MACHINE_ARN_PREFIX_ENV } from '../../lambdas/tools/state-machine-names.ts';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';
import { startLocalSecretsManager, type LocalSecretsManager } from '../../local/secretsmanager/local-secrets-manager.ts';
import { iamFunctionUrlEvent } from '../support/function-url-event.ts';
import { type InvocationOutcome, invokeInProcess } from '../support/lambda-invocation-process.ts';
import { type OtlpReceiver, startOtlpReceiver } from '../support/otlp-receiver.ts';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.ts';

const EVENTS_DELIVERY_ENTRY = join(REPO_ROOT, 'lambdas/handlers/events-delivery.ts');
const SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:server-key-AbCdEf';
/** A value only an argument carries: it must be in no exported span. */
const ARGUMENT_VALUE = 'argument-value-never-exported';

let otlp: OtlpReceiver;
let dynamo: LocalDynamo;
let secrets: LocalSecretsManager;
let webhooks: WebhookReceiver;
const serverKey = randomBytes(32).toString('hex');

beforeAll(async () => {
  [otlp, dynamo, secrets, webhooks] = await Promise.all([
    startOtlpReceiver(),
    startLocalDynamo(),
    startLocalSecretsManager({ secrets: [{ name: 'server-key', arn: SECRET_ARN, secretString: serverKey }] }),
    startWebhookReceiver(),
  ]);
});
afterAll(async () => {
  await Promise.all([otlp?.close(), dynamo?.close(), secrets?.close(), webhooks?.close()]);
});

/** What the construct's tracing setting puts on a function, pointed at the receiver, in a Lambda runtime. */
function tracingEnv(serviceName: string, endpoint = otlp.url): Record<string, string> {
  return {
    AWS_LAMBDA_FUNCTION_NAME: serviceName,
    OTEL_SERVICE_NAME: serviceName,
    OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    // The batch processor's timer never fires within the test: only the invocation's flush exports.
    OTEL_BSP_SCHEDULE_DELAY: '600000',
  };
}

/** The AWS side of every function: the stand-ins on loopback, placeholder credentials. */
function awsEnv(): Record<string, string> {
  return {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'local',
    AWS_SECRET_ACCESS_KEY: 'local',
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
    [ENV.tableName]: dynamo.tableName,
    [ENV.resultsBucket]: 'results',
    [ENV.secretArn]: SECRET_ARN,
  };
}

function mcpEnv(): Record<string, string> {
  return {
    ...awsEnv(),
    [STATE_MACHINE_ARN_PREFIX_ENV]: 'arn:aws:states:us-east-1:123456789012:stateMachine:Test-',
    [DURABLE_FUNCTION_ARN_PREFIX_ENV]: 'arn:aws:lambda:us-east-1:123456789012:function:Test-',
    // Tool folders as deployed: each with its tool.json and definition.
    [ENV.toolsDir]: join(REPO_ROOT, 'test/fixtures/testing-tools'),
  };
}

/** The spans of one service, read the moment its invocation's process has exited. */
function spansOf(serviceName: string) {
  return otlp.spans.filter((span) => span.serviceName === serviceName);
}

function expectSucceeded(outcome: InvocationOutcome): void {
  expect(outcome.ok, `${outcome.error}\n${outcome.output}`).toBe(true);
}

describe('with the tracing setting, each function exports its spans before its invocation returns', () => {
  it('the MCP function: the request span of tools/list, under its service name', async () => {
    const outcome = await invokeInProcess({
      module: MCP_HTTP_ENTRY,
      streaming: true,
      event: iamFunctionUrlEvent({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { note: ARGUMENT_VALUE } } }),
      env: { ...mcpEnv(), ...tracingEnv('mcp-under-test') },
    });
    expectSucceeded(outcome);
    expect((outcome.result as { prelude: { statusCode: number } }).prelude.statusCode).toBe(200);
    const spans = spansOf('mcp-under-test');
    expect(spans.map((span) => span.name)).toContain('tools/list');
    expect(spans.find((span) => span.name === 'tools/list')?.attributes).toMatchObject({ 'mcp.method.name': 'tools/list', 'jsonrpc.request.id': '1' });
    expect(otlp.bodies.join('\n')).not.toContain(ARGUMENT_VALUE);
  });

  it('the MCP function: a call of a name that is no tool is named for its method alone, and no argument value is exported', async () => {
    const outcome = await invokeInProcess({
      module: MCP_HTTP_ENTRY,
      streaming: true,
      event: iamFunctionUrlEvent({
        jsonrpc: '2.0',
        id: 3,
        method: 'tools/call',
        params: { name: `not_a_tool_${ARGUMENT_VALUE}`, arguments: { text: ARGUMENT_VALUE } },
      }),
      env: { ...mcpEnv(), ...tracingEnv('mcp-unknown-tool') },
    });
    expectSucceeded(outcome);
    expect(spansOf('mcp-unknown-tool').map((span) => span.name)).toEqual(['tools/call']);
    expect(otlp.bodies.join('\n')).not.toContain(ARGUMENT_VALUE);
  });

  it('status sync: the status sync span of an execution whose record is gone, under its service name', async () => {
    const executionArn = 'arn:aws:states:us-east-1:123456789012:execution:Test-job:gone-1';
    const outcome = await invokeInProcess({
      module: STATUS_SYNC_ENTRY,
      event: {
        id: 'event-1',
        'detail-type': 'Step Functions Execution Status Change',
        source: 'aws.states',
        time: new Date().toISOString(),
        detail: {
          executionArn,
          name: 'gone-1',
          status: 'SUCCEEDED',
          startDate: Date.now() - 1000,
          stopDate: Date.now(),
          input: JSON.stringify({ operation: { ownerId: 'owner-a', token: 'token-gone' }, arguments: { text: ARGUMENT_VALUE } }),
          inputDetails: { included: true },
          output: JSON.stringify({ echoed: ARGUMENT_VALUE }),
          outputDetails: { included: true },
        },
      },
      env: { ...awsEnv(), ...tracingEnv('status-sync-under-test') },
    });
    expectSucceeded(outcome);
    const spans = spansOf('status-sync-under-test');
    expect(spans.map((span) => span.name)).toEqual(['status sync']);
    expect(spans[0]?.attributes).toMatchObject({ 'async_mcp.execution.status': 'SUCCEEDED' });
    expect(otlp.bodies.join('\n')).not.toContain(ARGUMENT_VALUE);
  });

  it("webhook delivery: the span of a subscription's terminated body, under its service name", async () => {
    const ownerId = 'owner-webhooks';
    const id = 'subscription-1';
    const now = Date.now();
    // Sealed as the subscriptions seal it: the owner and the id are the additional data.
    const sealed = secretBoxFor(Buffer.from(serverKey, 'utf8')).seal(generateWebhookSecret(), `${ownerId}\n${id}`);
    const store = new DynamoDbWebhookSubscriptions({ client: dynamo.client, tableName: dynamo.tableName });
    const saved = await store.save(
      {
        ownerId,
        id,
        name: 'operation.finished',
        arguments: {},
        url: `${webhooks.origin}/hook`,
        secrets: [sealed],
        createdAt: now,
        refreshedAt: now,
        refreshBefore: null,
        startPosition: '0',
        active: true,
        health: { windowStart: now, attempts: 0, failures: 0 },
        version: 1,
      },
      undefined,
    );
    expect(saved).toBe(true);
    const outcome = await invokeInProcess({
      module: EVENTS_DELIVERY_ENTRY,
      event: { Records: [{ messageId: 'message-1', receiptHandle: 'receipt-1', body: JSON.stringify({ subscriptionId: id, ownerKey: ownerId }) }] },
      env: {
        ...awsEnv(),
        ...tracingEnv('webhook-delivery-under-test'),
        [ENV.eventsDeliveryQueueUrl]: 'https://sqs.us-east-1.amazonaws.com/123456789012/events-delivery',
        [ENV.eventsLoopbackCallbacks]: '1',
      },
    });
    expectSucceeded(outcome);
    expect(outcome.result).toEqual({ batchItemFailures: [] });
    expect(webhooks.posts.map((post) => JSON.parse(post.body).type)).toEqual(['terminated']);
    const spans = spansOf('webhook-delivery-under-test');
    expect(spans.map((span) => span.name)).toEqual(['webhook terminated']);
    expect(spans[0]?.attributes).toMatchObject({ 'async_mcp.webhook.subscription_id': id, 'http.response.status_code': 204 });
    // The callback URL may hold a receiver's token: never in a span.
    expect(otlp.bodies.join('\n')).not.toContain(webhooks.origin);
  });
});

describe('a collector that fails never fails or holds up an invocation', () => {
  const tools = () => iamFunctionUrlEvent({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} });

  it('answering 500: the invocation succeeds', async () => {
    otlp.answer = 500;
    try {
      const outcome = await invokeInProcess({
        module: MCP_HTTP_ENTRY,
        streaming: true,
        event: tools(),
        env: { ...mcpEnv(), ...tracingEnv('mcp-collector-500') },
      });
      expectSucceeded(outcome);
      // The export was tried (and refused) before the invocation returned, and the function's log says so.
      expect(spansOf('mcp-collector-500').map((span) => span.name)).toContain('tools/list');
      expect(outcome.output).toContain('spans not exported: the collector failed or is slow');
    } finally {
      otlp.answer = 200;
    }
  });

  it('not listening: the invocation succeeds', async () => {
    const gone = await startOtlpReceiver();
    await gone.close();
    const outcome = await invokeInProcess({
      module: MCP_HTTP_ENTRY,
      streaming: true,
      event: tools(),
      env: { ...mcpEnv(), ...tracingEnv('mcp-collector-gone', gone.url) },
    });
    expectSucceeded(outcome);
  });

  it('never answering: the invocation succeeds within the flush bound', async () => {
    otlp.answer = 'never';
    try {
      // The exporter would wait 30 s for an answer: the flush bound ends the wait long before.
      const env = { ...mcpEnv(), ...tracingEnv('mcp-collector-hung'), OTEL_EXPORTER_OTLP_TRACES_TIMEOUT: '30000' };
      const outcome = await invokeInProcess({ module: MCP_HTTP_ENTRY, streaming: true, event: tools(), env });
      expectSucceeded(outcome);
      // The bound, and the request itself on a busy machine.
      expect(outcome.ms).toBeGreaterThanOrEqual(INVOCATION_FLUSH_BOUND_MS);
      expect(outcome.ms).toBeLessThan(INVOCATION_FLUSH_BOUND_MS + 10_000);
    } finally {
      otlp.answer = 200;
    }
  });
});
