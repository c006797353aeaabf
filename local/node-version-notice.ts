/**
 * Node 20 is past its end of life, AWS SDK releases after the first week of January 2027 need
 * Node 22, and the functions run on nodejs24.x. On Node 20 `npm start` says so in one line, in
 * place of the AWS SDK's ten-line NodeVersionSupportWarning and oidc-provider's "Unsupported
 * runtime", which say the same thing; on Node 22 and 24 nothing is printed.
 */

/** The Node majors the project recommends. */
export const RECOMMENDED_NODE = '22 or 24';

/** The line to print on this Node, or undefined on a recommended one. */
export function nodeVersionNotice(version: string = process.versions.node): string | undefined {
  if (Number(version.split('.')[0]) >= 22) return undefined;
  return `Node.js ${version} is past its end of life: upgrade to Node ${RECOMMENDED_NODE} (the Lambda functions run on nodejs24.x, and AWS SDK releases after early January 2027 need Node 22 or later).`;
}

/**
 * Prints the notice (on stderr, unless NODE_NO_WARNINGS is set) and turns the AWS SDK's own
 * warning off for this process: the SDK reads the variable when a client is made.
 */
export function announceNodeVersion(env: NodeJS.ProcessEnv = process.env, print: (line: string) => void = console.error): void {
  const notice = nodeVersionNotice();
  if (!notice) return;
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  if (env.NODE_NO_WARNINGS !== '1') print(notice);
}

/** oidc-provider's own line, written with console.warn when the module is first imported. */
const OIDC_PROVIDER_RUNTIME_WARNING = /^oidc-provider WARNING: Unsupported runtime\b/;

/** Runs `load` (an import that reaches oidc-provider) without oidc-provider's runtime warning, which the notice replaces. */
export async function withoutRuntimeWarning<T>(load: () => Promise<T>): Promise<T> {
  if (nodeVersionNotice() === undefined) return load();
  const warn = console.warn;
  console.warn = (...args: unknown[]) => {
    if (typeof args[0] === 'string' && OIDC_PROVIDER_RUNTIME_WARNING.test(args[0])) return;
    warn.apply(console, args);
  };
  try {
    return await load();
  } finally {
    console.warn = warn;
  }
}
