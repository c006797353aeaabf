/**
 * The event rule's retry policy and dead-letter queue, as the template sets them: a status-sync
 * function whose role lost its table grant fails every delivery; once the target's retries run
 * out, the event is a JSON file under <data>/dead-letters/<queue>/ with EventBridge's attributes,
 * and `npm run replay-dead-letters` sends it through the restored assembly's target again.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { deadLetterFolder, type DeployedLocalStack, readCloudAssembly } from '../../../local/as-deployed/index.ts';
import { deployedAssembly, NO_AUTH, startAssemblyStack } from '../../support/deployed-assembly.ts';
import { noticeLog } from '../../support/notice-log.ts';
import { modernRequest } from '../../support/raw-mcp.ts';
import { ok } from '../../support/rpc-assertions.ts';

const REPO = resolve(import.meta.dirname, '../../..');
const temporary: string[] = [];
let running: DeployedLocalStack | undefined;

afterAll(async () => {
  await running?.close();
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true });
});

/** A copy of `assembly` whose status-sync role no longer has its DynamoDB statements. */
function withoutStatusSyncTableGrant(assembly: string): string {
  const copy = mkdtempSync(join(tmpdir(), 'dead-letters-assembly-'));
  temporary.push(copy);
  cpSync(assembly, copy, { recursive: true });
  const read = readCloudAssembly(copy);
  const fn = read.resources.find((r) => r.type === 'AWS::Lambda::Function' && r.logicalId.includes('StatusSync'))!;
  const role = read.resources.find((r) => r.type === 'AWS::IAM::Role' && r.identity.attributes.Arn === fn.properties.Role)!;
  const policy = read.resources.find((r) => r.type === 'AWS::IAM::Policy' && (r.properties.Roles as string[]).includes(role.identity.name))!;
  const file = join(copy, policy.templateFile);
  const template = JSON.parse(readFileSync(file, 'utf8'));
  const document = template.Resources[policy.logicalId].Properties.PolicyDocument as { Statement: Array<{ Action: string | string[] }> };
  const before = document.Statement.length;
  document.Statement = document.Statement.filter((s) => ![s.Action].flat().some((a) => a.startsWith('dynamodb:')));
  expect(document.Statement.length).toBeLessThan(before);
  writeFileSync(file, JSON.stringify(template));
  return copy;
}

describe('the status-sync rule target, failing', () => {
  it('dead-letters the event with its attributes once the retry policy runs out, and the replay command delivers it', async () => {
    const assembly = await deployedAssembly(NO_AUTH);
    const data = mkdtempSync(join(tmpdir(), 'dead-letters-data-'));
    temporary.push(data);
    const notices = noticeLog();
    running = (await startAssemblyStack(withoutStatusSyncTableGrant(assembly), { dataDir: data, notices })).stack;
    const rule = running.model.rules[0]!;
    const target = rule.targets[0]!;
    const queue = running.model.queues.find((q) => q.arn === target.deadLetterQueueArn)!;

    const created = ok(
      await modernRequest(
        running.url,
        'tools/call',
        { name: 'summarize_numbers', arguments: { numbers: [1, 2] } },
        { capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } },
      ),
    );
    expect(created.resultType).toBe('task');
    await running.drainEvents();
    const folder = deadLetterFolder(data, queue.name);
    const letters = readdirSync(folder).map((name) => JSON.parse(readFileSync(join(folder, name), 'utf8')));
    expect(letters.length).toBeGreaterThan(0);
    for (const letter of letters) {
      expect(JSON.parse(letter.body)).toMatchObject({ source: 'aws.states', 'detail-type': 'Step Functions Execution Status Change' });
      expect(letter.attributes).toMatchObject({
        RULE_ARN: rule.arn,
        TARGET_ARN: target.functionArn,
        ERROR_CODE: expect.any(String),
        ERROR_MESSAGE: expect.stringContaining('AccessDenied'),
        EXHAUSTED_RETRY_CONDITION: 'MaximumRetryAttempts',
        RETRY_ATTEMPTS: String(target.retryPolicy!.maximumRetryAttempts),
      });
    }
    // The function's own log says why, in its file under the data directory and on the console.
    const statusSync = running.model.functions.find((f) => f.arn === target.functionArn)!;
    expect(readFileSync(join(data, 'logs', `${statusSync.logicalId}.log`), 'utf8')).toMatch(/AccessDeniedException/);
    // The stack's own notices say it too: the table's gateway refused the role, and the rule retried, then dead-lettered.
    expect(notices.lines).toContainEqual(expect.stringMatching(/^WARN IAM gateway \(dynamodb\): AccessDenied: /));
    expect(notices.lines).toContainEqual(
      expect.stringMatching(new RegExp(`^WARN event rule ${rule.name}: delivery of event .* failed \\(attempt 1\\), retrying$`)),
    );
    expect(notices.lines.filter((line) => line.includes('dead-lettered'))).toHaveLength(letters.length);
    await running.close();
    running = undefined;

    // The deployed assembly again: its status-sync role has the grant back.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'scripts/replay-dead-letters.ts', '--data', data, '--cdk-out', assembly],
      { cwd: REPO },
    );
    expect(stdout).toContain(`${letters.length} found, ${letters.length} replayed and removed, 0 still failing`);
    await vi.waitFor(() => expect(readdirSync(folder)).toEqual([]));
  }, 600_000);
});
