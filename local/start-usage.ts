/**
 * `npm start`'s command line: its usage and its flags. Light on purpose: `--help` and a mistyped
 * flag are answered from here, before the stack's modules load (see main.ts).
 */
import { parseArgs } from 'node:util';
import { commandAsStarted } from '../client/command-as-started.ts';
import { docsPath, shownPath } from '../client/help-paths.ts';
import { DEFAULT_HOST, DEFAULT_PORT, DEFAULT_WORKERS_DIR } from './start-defaults.ts';

// Worded as the user started it (`async-mcp start` in a project, `npm start --`), with the folders it
// would use: the bin points a project's workers at ./workers, a clone's are ./lambdas/handlers/workers.
const START = commandAsStarted('start', 'start');
const INDENT = ' '.repeat(`Usage: ${START} `.length);
export const USAGE = `Usage: ${START} [--port ${DEFAULT_PORT}] [--host ${DEFAULT_HOST}] [--data DIR] [--tools DIR] [--workers DIR] [--watch]
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
export function parseStartCommandLine() {
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

export type StartFlags = ReturnType<typeof parseStartCommandLine>;
