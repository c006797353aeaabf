/**
 * `npm start` once its command line is read (start-usage.ts): the whole stack on this machine
 * (see local-stack.ts), or with `--cdk-out DIR` / `--as-deployed` a cloud assembly as deployed
 * (see as-deployed/start-deployed-stack.ts).
 */
import { relative, resolve } from 'node:path';
import { OAuthConfigError } from '../lambdas/auth/oauth-config.ts';
import { handleToolsFromEnv, limitsFromEnv } from '../lambdas/handlers/environment.ts';
import { ToolFolderError } from '../lambdas/tools/tool-folder.ts';
import { OPERATION_CARD_ENV, operationCardOn } from '../lambdas/mcp/apps/operation-card.ts';
import { eventsWebhookFrom, type EventsWebhookSettings } from './events/events-webhook-options.ts';
import type { EventBridgeEvent } from './events/put-events-endpoint.ts';
import { createWebhookDelivery, WebhookConfigError } from './events/webhook-delivery.ts';
import type { LocalStack } from './local-stack.ts';
import { loadLocalTools } from './local-tools.ts';
import { DEFAULT_PORT, DEFAULT_WORKERS_DIR } from './start-defaults.ts';
import { announceNodeVersion, withoutRuntimeWarning } from './node-version-notice.ts';
import { oauthOptionsFrom } from './oauth/oauth-options.ts';
import { stopOnSignals } from './stop-signals.ts';
import { toolLabel } from './tool-label.ts';
import { startLocalTracing } from './local-tracing.ts';
import { type ToolWatcher, watchToolFiles } from './tool-watcher.ts';
import { isDurableArn } from '../lambdas/aws/routing-workflow-engine.ts';
import { type StartFlags, USAGE } from './start-usage.ts';

/** Starts what `values` ask for, and stops it on a signal. */
export async function startCommand(values: StartFlags): Promise<void> {
  announceNodeVersion();
  // Before anything is served: the first request's span must find the SDK registered.
  const tracing = await startLocalTracing(values.trace === true);
  const port = values.port === undefined ? DEFAULT_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    console.error(`--port must be a port number, got "${values.port}"\n\n${USAGE}`);
    process.exit(2);
  }
  if (values['cdk-out'] !== undefined || values['as-deployed']) {
    // A project's `npm start` says --watch; its `npm start -- --as-deployed` still runs, unwatched.
    if (values.watch) console.log('--watch reloads the source folders, not an assembly: synthesize again to change what runs as deployed');
    if (values['no-operation-card']) {
      console.error(`--no-operation-card: an assembly's function reads its template's environment; synthesize with -c operationCard=false\n\n${USAGE}`);
      process.exit(2);
    }
    let webhook: EventsWebhookSettings | undefined;
    try {
      webhook = eventsWebhookFrom(values, process.env);
    } catch (error) {
      console.error(`Cannot start: ${(error as Error).message}`);
      process.exit(2);
    }
    const delivery = webhook ? createWebhookDelivery(webhook) : undefined;
    // Listening from the start: a signal during the synth (it takes a while) ends it, and the
    // temporary assembly goes with the process.
    const stopping = new AbortController();
    // The as-deployed runtime is loaded only here: a plain start never needs it (the assembly
    // reader and its CloudFormation resolver are a tenth of a start's CPU).
    const starting = import('./as-deployed/run-deployed-cli.ts').then(({ runDeployedFromCli }) =>
      runDeployedFromCli({
        ...(delivery ? { onEvent: (event: EventBridgeEvent) => delivery.deliver(event.id, event) } : {}),
        ...(values['cdk-out'] !== undefined ? { cdkOut: values['cdk-out'] } : {}),
        context: values.context ?? [],
        port,
        ...(values.host ? { host: values.host } : {}),
        ...(values.data ? { dataDir: values.data } : {}),
        signal: stopping.signal,
      }),
    );
    stopOnSignals(async (signal) => {
      stopping.abort(new Error(`stopped by ${signal}`));
      const close = await starting.catch(() => undefined);
      await close?.();
      await delivery?.close();
      await tracing?.shutdown();
    });
    try {
      await starting;
    } catch (error) {
      // A stop signal ended the start: stopOnSignals finishes and exits.
      if (stopping.signal.aborted) return;
      console.error(`Cannot start: ${portInUse(error) ?? (error as Error).message}`);
      process.exit(1);
    }
    if (webhook) printWebhook(webhook);
    return;
  }
  if (values.context?.length) {
    console.error(`-c passes CDK context to --as-deployed only\n\n${USAGE}`);
    process.exit(2);
  }
  let limits: ReturnType<typeof limitsFromEnv>;
  let handleTools: boolean;
  let oauth: ReturnType<typeof oauthOptionsFrom>;
  let webhook: EventsWebhookSettings | undefined;
  try {
    limits = limitsFromEnv();
    handleTools = handleToolsFromEnv();
    oauth = oauthOptionsFrom(values, process.env);
    webhook = eventsWebhookFrom(values, process.env);
    // The in-process server reads the card's setting where the Lambda does: the environment.
    if (values['no-operation-card']) process.env[OPERATION_CARD_ENV] = '0';
    operationCardOn(undefined);
  } catch (error) {
    console.error(`Cannot start: ${(error as Error).message}`);
    process.exit(2);
  }
  const toolsDir = values.tools ?? process.env.ASYNC_MCP_TOOLS_DIR ?? 'state-machines';
  const workersDir = values.workers ?? process.env.ASYNC_MCP_WORKERS_DIR;

  let stack: LocalStack;
  try {
    // The tools first, the stack's modules after: a broken folder is refused without loading them.
    const tools = await loadLocalTools(toolsDir, workersDir);
    // oidc-provider is loaded only when asked for: it is large, and warns about Node 20 at import.
    const start = values['oauth-dev']
      ? (await withoutRuntimeWarning(() => import('./oauth/local-stack-with-dev-authorization.ts'))).startLocalStackWithDevAuthorization
      : (await import('./local-stack.ts')).startLocalStack;
    stack = await start({
      toolsDir,
      ...(workersDir ? { workersDir } : {}),
      tools,
      port,
      limits,
      handleTools,
      ...(values.host ? { host: values.host } : {}),
      ...(values.data ? { dataDir: values.data } : {}),
      ...(oauth ? { oauth } : {}),
      ...(webhook ? { eventsWebhook: { url: webhook.url, secret: webhook.secret } } : {}),
      onFailedRun: (line: string) => console.error(line),
      ...(values.watch ? { reloadable: true } : {}),
    });
  } catch (error) {
    if (error instanceof ToolFolderError || error instanceof OAuthConfigError || error instanceof WebhookConfigError) {
      console.error(`Cannot start: ${error.message}`);
      process.exit(1);
    }
    const inUse = portInUse(error);
    if (inUse) {
      console.error(`Cannot start: ${inUse}`);
      process.exit(1);
    }
    throw error;
  }

  console.log(`async-mcp is serving MCP at ${stack.url.href}`);
  console.log(`Data: ${values.data ? `kept in ${values.data}` : 'in memory (use --data DIR to keep it)'}`);
  if (oauth) {
    console.log(
      `OAuth: bearer tokens from ${oauth.issuer}, audience ${oauth.audience ?? stack.url.href}${oauth.requiredScopes?.length ? `, scopes ${oauth.requiredScopes.join(' ')}` : ''}`,
    );
  }
  if (webhook) printWebhook(webhook);
  console.log('Tools:');
  // Names up to 128 characters: the column is as wide as the longest, at least 24.
  const nameWidth = Math.max(24, ...stack.catalog.tools.map((tool) => tool.name.length + 1));
  for (const tool of stack.catalog.tools) {
    // A durable tool is a Lambda function, not a state machine of either type.
    const kind = isDurableArn(tool.stateMachineArn) ? 'DURABLE' : tool.workflowType;
    console.log(`  ${tool.name.padEnd(nameWidth)} ${tool.invocation.padEnd(5)} ${kind.padEnd(8)} ${toolLabel(tool)}`);
  }
  const watcher = values.watch ? watchAndReload(stack, [toolsDir, workersDir ?? DEFAULT_WORKERS_DIR]) : undefined;
  stopOnSignals(async () => {
    await watcher?.close();
    await stack.close();
    // Spans still batched are exported before the process ends.
    await tracing?.shutdown();
  });
}

/** `--watch`: each burst of saves reloads the tools it touches, told in one line (and a line per problem). */
function watchAndReload(stack: LocalStack, folders: string[]): ToolWatcher | undefined {
  const { reloadTools } = stack;
  if (!reloadTools) return undefined;
  console.log(
    `Watching ${folders.map((folder) => relative(process.cwd(), resolve(folder)) || '.').join(' and ')}: a saved change reloads the tools it touches`,
  );
  return watchToolFiles(folders, async (paths) => {
    const before = new Set(stack.catalog.tools.map((tool) => tool.name));
    const { reloaded, removed, problems } = await reloadTools(paths);
    for (const { tool, error } of problems) {
      const fallback = tool === undefined ? 'no tool changed' : before.has(tool) ? `${tool} keeps its last good version` : `${tool} is not served`;
      // One line each, a compiler's multi-line message included, so that each save reads as one line.
      console.error(`Not reloaded: ${error.file}: ${error.reason.replace(/\s*\n\s*/g, ' ')} (${fallback})`);
    }
    const done = [...(reloaded.length > 0 ? [`Reloaded ${reloaded.join(', ')}`] : []), ...(removed.length > 0 ? [`Removed ${removed.join(', ')}`] : [])];
    if (done.length > 0) console.log(done.join('; '));
  });
}

/** What to do when a port is taken (another `npm start`, say): the port, and the flag that picks another. */
function portInUse(error: unknown): string | undefined {
  const listen = error as NodeJS.ErrnoException & { address?: string; port?: number };
  if (listen?.code !== 'EADDRINUSE') return undefined;
  const where = listen.port === undefined ? 'a port' : `port ${listen.port}${listen.address ? ` on ${listen.address}` : ''}`;
  return `${where} is already in use (another npm start?). Stop what holds it, or pick another port: --port ${DEFAULT_PORT + 10} (--port 0 picks a free one).`;
}

/** Where events go; shown once, as a generated secret exists nowhere else. */
function printWebhook(webhook: EventsWebhookSettings): void {
  const signing = webhook.generated ? `signed with ${webhook.secret} (new for this run)` : 'signed with the given secret';
  console.log(`Events: each operation status change is POSTed to ${webhook.url.href}, ${signing} (Standard Webhooks)`);
}
