/**
 * The one convention that ties a state machine to its worker functions.
 * A Task state names a worker as `"Resource": "${Worker_<name>}"`; the worker's code is
 * `lambdas/handlers/workers/<name with _ as ->.ts`. The CDK stack substitutes the deployed
 * function's ARN; the local runtime calls the same handler in-process.
 */

const PLACEHOLDER = /\$\{Worker_([a-z][a-z0-9_]*)\}/g;

/** Distinct worker names used by a definition, sorted. */
export function findWorkerPlaceholders(definitionText: string): string[] {
  return [...new Set([...definitionText.matchAll(PLACEHOLDER)].flatMap((m) => (m[1] === undefined ? [] : [m[1]])))].sort();
}

/** The substitution key (without `${}`) for a worker, as CloudFormation DefinitionSubstitutions take it. */
export function workerSubstitutionKey(worker: string): string {
  return `Worker_${worker}`;
}

/** The worker's module file name under `lambdas/handlers/workers/`. */
export function workerModuleFile(worker: string): string {
  return `${worker.replaceAll('_', '-')}.ts`;
}

/** Replaces every worker placeholder with `resolve(worker)`. */
export function substituteWorkers(definitionText: string, resolve: (worker: string) => string): string {
  return definitionText.replace(PLACEHOLDER, (_, worker: string) => resolve(worker));
}

/**
 * Workers the project ships, named like a tool's own: `request_input` asks the client a
 * question mid-run, `report_progress` reports progress and log lines.
 */
export const BUILT_IN_WORKERS: readonly string[] = ['request_input', 'report_progress'];

/** The placeholder a definition writes for `worker`. */
export function placeholderFor(worker: string): string {
  return `\${${workerSubstitutionKey(worker)}}`;
}
