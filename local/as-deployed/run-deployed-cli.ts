/**
 * `npm start -- --cdk-out DIR` and `npm start -- --as-deployed [-c key=value ...]`: runs the
 * cloud assembly with startDeployedStack (synthesizing it first for --as-deployed) and prints
 * where MCP is served, the tools, and where the local stack differs from AWS.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { AssemblyError } from '../assembly/assembly-error.ts';
import type { DeployedStack } from '../assembly/deployed-stack.ts';
import type { EventBridgeEvent } from '../events/put-events-endpoint.ts';
import { toolLabel } from '../tool-label.ts';
import { startDeployedStack } from './start-deployed-stack.ts';
import { synthesizeAssembly } from './synthesize-assembly.ts';

export interface DeployedCliOptions {
  /** An existing assembly; absent: synthesize one (--as-deployed). */
  cdkOut?: string;
  /** `-c key=value` for the synth. */
  context: string[];
  dataDir?: string;
  host?: string;
  port: number;
  /** Each event a function put on the default bus (the operation events, for --events-webhook). */
  onEvent?: (event: EventBridgeEvent) => void;
  /** Stops a synth under way (the start then rejects with the signal's reason). */
  signal?: AbortSignal;
}

/** Where the local stack is not AWS, printed at start; the folders named are those of `dataDir` (--data), or what --data would keep. */
export function differencesFromAws(dataDir?: string): string[] {
  const deadLetters = dataDir ? `${join(dataDir, 'dead-letters')}/<queue>/` : 'memory (with --data DIR, DIR/dead-letters/<queue>/)';
  const logs = dataDir ? `the console and ${join(dataDir, 'logs')}/<logicalId>.log` : 'the console only (with --data DIR, also to DIR/logs/<logicalId>.log)';
  return [
    'one account (000000000000) and region (us-east-1); plain http on this machine',
    'IAM: identity policies, AWS managed policies and Lambda resource policies; no SCPs, permission boundaries, session policies or KMS key policies',
    `EventBridge retries a failing status-sync invoke under the rule's RetryPolicy, then dead-letters it to ${deadLetters} (in AWS the Lambda async invoke config retries function errors)`,
    `no CloudWatch: logs go to ${logs}; metrics, alarms and the dashboard are not run`,
    'no concurrency limits or throttling; Task states that call other AWS services need a mock, and the assembly carries none',
    'EventBridge takes PutEvents on the default bus only (the operation events); rules of your own on those events are not run',
    'durable tools run in the local durable service (local/durable/README.md): execution ARNs say $LATEST where AWS names the version the alias pointed to; an invocation that fails in its sandbox (a timeout, a crash) fails the execution (what Lambda does then was not checked)',
  ];
}

/** Starts the deployed stack and prints what a user needs; returns the close function. */
export async function runDeployedFromCli(options: DeployedCliOptions): Promise<() => Promise<void>> {
  let cdkOut = options.cdkOut;
  let temporary: string | undefined;
  if (!cdkOut) {
    const context: Record<string, string> = {};
    for (const pair of options.context) {
      const at = pair.indexOf('=');
      if (at <= 0) throw new AssemblyError('-c', undefined, `context must be key=value, got "${pair}"`);
      context[pair.slice(0, at)] = pair.slice(at + 1);
    }
    // With --data the assembly stays beside the data it ran on, for the dead-letter replay.
    const outDir = options.dataDir ? resolve(options.dataDir, 'cdk.out') : await mkdtemp(join(tmpdir(), 'async-mcp-as-deployed-'));
    if (options.dataDir) await rm(outDir, { recursive: true, force: true });
    else temporary = outDir;
    console.log(`Synthesizing the app into ${outDir} (npx cdk synth${options.context.map((c) => ` -c ${c}`).join('')}) ...`);
    const synthesized = synthesizeAssembly({ outDir, context, ...(options.signal ? { signal: options.signal } : {}) });
    // After the synth's own exit hook, which ends its processes: none writes into the folder once it is removed.
    if (temporary) removeOnExit(temporary);
    await synthesized;
    cdkOut = outDir;
  }
  const stack = await startDeployedStack({
    cdkOut,
    port: options.port,
    ...(options.host ? { host: options.host } : {}),
    ...(options.dataDir ? { dataDir: options.dataDir } : {}),
    ...(options.onEvent ? { onEvent: options.onEvent } : {}),
  }).catch(async (error: unknown) => {
    if (temporary) await rm(temporary, { recursive: true, force: true });
    throw error;
  });

  const { model } = stack;
  console.log(`async-mcp is serving MCP at ${stack.url.href}`);
  console.log(
    `Assembly: ${resolve(cdkOut)}${temporary ? ' (synthesized now, removed on exit)' : ''}, stack ${model.stackName}, Function URL auth ${model.functionUrl?.authType ?? 'none'}`,
  );
  if (model.functionUrl?.authType === 'AWS_IAM') {
    const key = stack.authority.localCaller;
    console.log(
      `Requests must be signed with SigV4 (service lambda, region ${model.region}) with the local key: access key "${key.accessKeyId}", secret "${key.secretAccessKey}". With the CLI:`,
    );
    console.log(`  ${signedCliCommand(stack.url, model.region, key)}`);
  }
  console.log(`Data: ${options.dataDir ? `kept in ${options.dataDir}` : 'in memory (use --data DIR to keep it)'}`);
  console.log('Tools:');
  // The columns of npm start's list: name, invocation, workflow type, title.
  for (const tool of toolsOf(model)) console.log(`  ${tool.name.padEnd(24)} ${tool.invocation.padEnd(5)} ${tool.type.padEnd(8)} ${tool.label}`);
  console.log('Where this differs from AWS:');
  for (const line of differencesFromAws(options.dataDir)) console.log(`  - ${line}`);
  return async () => {
    await stack.close();
    if (temporary) await rm(temporary, { recursive: true, force: true });
  };
}

/**
 * The CLI's `tools` command, signed with the local key given in the environment. The empty
 * AWS_SESSION_TOKEN and AWS_PROFILE keep a shell's own AWS settings out: the SDK would send the
 * token with the local key, and prefers a profile to keys in the environment.
 */
export function signedCliCommand(url: URL, region: string, key: { accessKeyId: string; secretAccessKey: string }): string {
  return `AWS_REGION=${region} AWS_ACCESS_KEY_ID=${key.accessKeyId} AWS_SECRET_ACCESS_KEY=${key.secretAccessKey} AWS_SESSION_TOKEN= AWS_PROFILE= npm run cli -- tools ${url.href} --sigv4`;
}

/**
 * Removes a folder when the process exits, however it exits (a failed start, a stop signal, an
 * error): 'exit' listeners run for process.exit and a drained event loop alike, and must be synchronous.
 */
function removeOnExit(dir: string): void {
  process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
}

/** The tools the MCP function was bundled with (its asset's state-machines/), each with its machine's type. */
function toolsOf(model: DeployedStack): Array<{ name: string; invocation: string; type: string; label: string }> {
  const mcp = model.functions.find((f) => f.logicalId === model.functionUrl?.targetFunctionLogicalId);
  const dir = mcp ? join(mcp.assetDir, 'state-machines') : undefined;
  if (!dir || !existsSync(dir)) return model.stateMachines.map((m) => ({ name: m.name, invocation: '-', type: m.type, label: '' }));
  return readdirSync(dir)
    .sort()
    .flatMap((folder) => {
      const file = join(dir, folder, 'tool.json');
      if (!existsSync(file)) return [];
      const tool = JSON.parse(readFileSync(file, 'utf8')) as { name?: string; invocation?: string; title?: string; description?: string };
      const name = tool.name ?? folder;
      const machine = model.stateMachines.find((m) => m.name.endsWith(`-${name}`));
      return [{ name, invocation: tool.invocation ?? '-', type: machine?.type ?? '-', label: toolLabel(tool) }];
    });
}
