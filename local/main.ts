/**
 * `npm start`: the whole stack on this machine (see local-stack.ts). `--cdk-out DIR` runs a cloud
 * assembly as deployed instead, and `--as-deployed [-c key=value ...]` synthesizes one first
 * (see as-deployed/start-deployed-stack.ts).
 * Flags: --port, --host, --data DIR (keep data across restarts), --tools DIR, --workers DIR, --watch,
 * --oauth-issuer URL, --oauth-audience AUD, --oauth-scopes "a b" (an OAuth 2.1 resource server),
 * --events-webhook URL [--events-webhook-secret whsec_...] (operation events, signed, to a loopback URL).
 */
import { relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { OAuthConfigError } from '../lambdas/auth/oauth-config.ts';
import { handleToolsFromEnv, limitsFromEnv } from '../lambdas/handlers/environment.ts';
import { ToolFolderError } from '../lambdas/tools/tool-folder.ts';
import { OPERATION_CARD_ENV, operationCardOn } from '../lambdas/mcp/apps/operation-card.ts';
import { eventsWebhookFrom, type EventsWebhookSettings } from './events/events-webhook-options.ts';
import type { EventBridgeEvent } from './events/put-events-endpoint.ts';
import { createWebhookDelivery, WebhookConfigError } from './events/webhook-delivery.ts';
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_WORKERS_DIR, startLocalStack, type LocalStack } from './local-stack.ts';
import { announceNodeVersion, withoutRuntimeWarning } from './node-version-notice.ts';
import { oauthOptionsFrom } from './oauth/oauth-options.ts';
import { stopOnSignals } from './stop-signals.ts';
import { toolLabel } from './tool-label.ts';
import { startLocalTracing } from './local-tracing.ts';
import { type ToolWatcher, watchToolFiles } from './tool-watcher.ts';
import { isDurableArn } from '../lambdas/aws/routing-workflow-engine.ts';
import { commandAsStarted } from '../client/command-as-started.ts';
import { docsPath, shownPath } from '../client/help-paths.ts';

// Worded as the user started it (`async-mcp start` in a project, `npm start --`), with the folders it
// would use: the bin points a project's workers at ./workers, a clone's are ./lambdas/handlers/workers.
const START = commandAsStarted('start', 'start');
const INDENT = ' '.repeat(`Usage: ${START} `.length);
const USAGE = `Usage: ${START} [--port ${DEFAULT_PORT}] [--host ${DEFAULT_HOST}] [--data DIR] [--tools DIR] [--workers DIR] [--watch]
${INDENT}[--oauth-issuer URL [--oauth-audience AUD] [--oauth-scopes "a b"] | --oauth-dev]
${INDENT}[--events-webhook http://127.0.0.1:PORT/PATH [--events-webhook-secret whsec_...]]
${INDENT}[--no-operation-card] [--trace]
       ${START} --cdk-out DIR [--port N] [--host HOST] [--data DIR] [--events-webhook URL ...]
       ${START} --as-deployed [-c key=value ...] [--port N] [--host HOST] [--data DIR] [--events-webhook URL ...]

  --cdk-out DIR run the cloud assembly \`npx cdk synth -o DIR\` wrote, as deployed: its bundled
                assets, resolved templates and IAM roles (nothing from the source folders)
  --as-deployed synthesize the app into a temporary folder first (-c passes CDK context,
                e.g. -c auth=none), then run it as --cdk-out does

  --port N      port of the MCP endpoint (0 picks a free one)
  --host HOST   address the MCP endpoint binds; keep it on loopback (the local AWS endpoints bind 127.0.0.1)
  --data DIR    keep operations and execution history in DIR across restarts (default: in memory)
  --tools DIR   the tools directory (default: ${shownPath(process.env.ASYNC_MCP_TOOLS_DIR ?? 'state-machines')}; $ASYNC_MCP_TOOLS_DIR sets another)
  --workers DIR the worker modules the tools name (default: ${shownPath(process.env.ASYNC_MCP_WORKERS_DIR ?? DEFAULT_WORKERS_DIR)};
                $ASYNC_MCP_WORKERS_DIR sets another)
  --watch       reload a tool when a file of it is saved (tool.json, its definition, mocks.json, durable.ts,
                a worker), without a restart: operations already running keep the code they started with,
                and a folder that no longer loads is reported while its last good version keeps serving
  --oauth-issuer URL    be an OAuth 2.1 resource server: every request needs a bearer token from this
                        issuer (https; http only on loopback) (default: $ASYNC_MCP_OAUTH_ISSUER; off)
  --oauth-audience AUD  the aud tokens must carry (default: $ASYNC_MCP_OAUTH_AUDIENCE, else the server's URL)
  --oauth-scopes "a b"  scopes every token must hold (default: $ASYNC_MCP_OAUTH_SCOPES; none)
  --oauth-dev           also start a development authorization server (any user name, no password) on
                        127.0.0.1, port + 1, and require its tokens (scope mcp:tools)
  --events-webhook URL  POST each operation status event (${docsPath('events.md')}) as JSON to this loopback URL
                        (127.0.0.1, ::1 or localhost only), signed as Standard Webhooks specifies
  --events-webhook-secret whsec_...  the signing secret (default: $ASYNC_MCP_EVENTS_WEBHOOK_SECRET, else a
                        new one for each run, printed at startup)
  --no-operation-card   no operation card (${docsPath('apps.md')}) for hosts that render MCP Apps (default:
                        $ASYNC_MCP_OPERATION_CARD=0 turns it off; as deployed: -c operationCard=false)
  --trace               print each finished operation's spans as a waterfall in the console (no collector
                        needed); OTEL_EXPORTER_OTLP_ENDPOINT exports them over OTLP (${docsPath('local.md#tracing')})

Environment: ASYNC_MCP_MAX_ACTIVE_OPERATIONS (active operations per principal, default 100),
ASYNC_MCP_HANDLE_TOOLS=0 (no handle tools for clients without async support; on by default),
MAX_KEEPALIVE_SECONDS, ALLOW_UNLIMITED_KEEPALIVE, MAX_BLOCKING_SECONDS: the same settings the Lambda reads.`;

/** The command line's options, or the usage on stderr and exit code 2. */
function parseCommandLine() {
  try {
    return parseArgs({
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        data: { type: 'string' },
        tools: { type: 'string' },
        workers: { type: 'string' },
        watch: { type: 'boolean' },
        'oauth-issuer': { type: 'string' },
        'oauth-audience': { type: 'string' },
        'oauth-scopes': { type: 'string' },
        'oauth-dev': { type: 'boolean' },
        'events-webhook': { type: 'string' },
        'events-webhook-secret': { type: 'string' },
        'no-operation-card': { type: 'boolean' },
        trace: { type: 'boolean' },
        'cdk-out': { type: 'string' },
        'as-deployed': { type: 'boolean' },
        context: { type: 'string', short: 'c', multiple: true },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
    }).values;
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
}

async function main(): Promise<void> {
  const values = parseCommandLine();
  if (values.help) {
    console.log(USAGE);
    return;
  }
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
    // oidc-provider is loaded only when asked for: it is large, and warns about Node 20 at import.
    const start = values['oauth-dev']
      ? (await withoutRuntimeWarning(() => import('./oauth/local-stack-with-dev-authorization.ts'))).startLocalStackWithDevAuthorization
      : startLocalStack;
    stack = await start({
      toolsDir,
      ...(workersDir ? { workersDir } : {}),
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

await main();
