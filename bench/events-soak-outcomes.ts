/**
 * What the Events soak holds its subscribers to, read back after the starts: the
 * operations' `operation.finished` events from the log, and how many question attempts
 * failed with Mcp.AskFailed, from the executions' histories.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { GetExecutionHistoryCommand, ListExecutionsCommand, ListStateMachinesCommand, SFNClient } from '@aws-sdk/client-sfn';
import { FINISHED, type FinishedEvent } from './events-soak-arrivals.ts';
import type { SoakRpc } from './events-soak-rpc.ts';

/**
 * The eventIds of the operations' `operation.finished`, read from the log by poll until every
 * operation has one or `deadline` passes (the log is the reference every mode is held to).
 */
export async function finishedEventIds(
  rpc: SoakRpc,
  cursor: string,
  operations: ReadonlySet<string>,
  deadline: number,
): Promise<{ ids: Set<string>; completed: Set<string> }> {
  const ids = new Set<string>();
  /** Operations that ended completed without an error, with the answer in their result when they asked. */
  const completed = new Set<string>();
  const seen = new Set<string>();
  let at = cursor;
  while (seen.size < operations.size && Date.now() < deadline) {
    const result = (await rpc('events/poll', { name: FINISHED, arguments: {}, cursor: at }))?.message?.result;
    if (!result) {
      await sleep(200);
      continue;
    }
    for (const event of result.events as FinishedEvent[]) {
      const operation = event.data.taskId ?? event.data.operationId;
      if (operation && operations.has(operation)) {
        seen.add(operation);
        ids.add(event.eventId);
        const output = event.data.result?.structuredContent;
        if (event.data.status === 'completed' && !event.data.isError && (output?.confirmation === undefined || output.confirmation.action === 'accept')) {
          completed.add(operation);
        }
      }
    }
    at = result.cursor;
    if (!result.hasMore) await sleep(250);
  }
  return { ids, completed };
}

/** How many attempts of confirm_payload's asking state failed with Mcp.AskFailed (and were retried), from the executions' histories. */
export async function askFailures(endpoint: string): Promise<number> {
  const sfn = new SFNClient({ region: 'us-east-1', endpoint, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
  try {
    const machines = (await sfn.send(new ListStateMachinesCommand({}))).stateMachines ?? [];
    const machine = machines.find(({ name }) => name?.includes('confirm_payload'));
    if (!machine?.stateMachineArn) return Number.NaN;
    let failures = 0;
    let nextToken: string | undefined;
    do {
      const page = await sfn.send(new ListExecutionsCommand({ stateMachineArn: machine.stateMachineArn, maxResults: 100, nextToken }));
      for (const { executionArn } of page.executions ?? []) {
        let historyToken: string | undefined;
        do {
          const history = await sfn.send(new GetExecutionHistoryCommand({ executionArn, maxResults: 1000, nextToken: historyToken }));
          failures += (history.events ?? []).filter((event) => event.taskFailedEventDetails?.error === 'Mcp.AskFailed').length;
          historyToken = history.nextToken;
        } while (historyToken);
      }
      nextToken = page.nextToken;
    } while (nextToken);
    return failures;
  } finally {
    sfn.destroy();
  }
}
