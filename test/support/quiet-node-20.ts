/**
 * vitest setupFiles: oidc-provider warns "Unsupported runtime" with console.warn when it is
 * first imported on Node 20, in every worker that loads it; node-version-setup.ts has said it
 * once for the run. Every other warning passes. Every project loads this file, so it also
 * brings in the output guard: a test that prints an ERROR line or a stack trace it did not
 * expect fails.
 */
import { nodeVersionNotice } from '../../local/node-version-notice.ts';
import './output-guard.ts';

const OIDC_PROVIDER_RUNTIME_WARNING = /^oidc-provider WARNING: Unsupported runtime\b/;
// A worker that does not isolate its files runs this before each of them: wrap console.warn once.
const QUIET = Symbol.for('async-mcp.quiet-node-20');

if (nodeVersionNotice() !== undefined && !(QUIET in console.warn)) {
  const warn = console.warn;
  console.warn = Object.assign(
    (...args: unknown[]) => {
      if (typeof args[0] === 'string' && OIDC_PROVIDER_RUNTIME_WARNING.test(args[0])) return;
      warn.apply(console, args);
    },
    { [QUIET]: true },
  );
}
