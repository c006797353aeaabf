/**
 * `npm start`: the whole stack on this machine (see local-stack.ts). `--cdk-out DIR` runs a cloud
 * assembly as deployed instead, and `--as-deployed [-c key=value ...]` synthesizes one first
 * (see as-deployed/start-deployed-stack.ts).
 * Flags: --port, --host, --data DIR (keep data across restarts), --tools DIR, --workers DIR, --watch,
 * --oauth-issuer URL, --oauth-audience AUD, --oauth-scopes "a b" (an OAuth 2.1 resource server),
 * --events-webhook URL [--events-webhook-secret whsec_...] (operation events, signed, to a loopback URL).
 */
import { parseStartCommandLine, USAGE } from './start-usage.ts';

const values = parseStartCommandLine();
if (values.help) console.log(USAGE);
// The stack's modules load only to start one: --help and a mistyped flag are answered without them.
else await (await import('./start-command.ts')).startCommand(values);
