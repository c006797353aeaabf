/**
 * The local DynamoDB runs in a process of its own, as DynamoDB is its own service in AWS:
 * bound to loopback, its port reported back, and gone with `close()` or with its parent.
 */
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import { afterAll, describe, expect, it } from 'vitest';
import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { startLocalDynamo, type LocalDynamo } from '../../local/dynamodb/dynamo-local.ts';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

const started: LocalDynamo[] = [];
afterAll(async () => {
  await Promise.all(started.map((dynamo) => dynamo.close()));
});

describe('dynalite in its own process', () => {
  it('serves the DynamoDB API on 127.0.0.1 from a process that is not this one', async () => {
    const dynamo = await startLocalDynamo();
    started.push(dynamo);
    expect(dynamo.pid).not.toBe(process.pid);
    expect(alive(dynamo.pid)).toBe(true);
    expect(new URL(dynamo.endpoint).hostname).toBe('127.0.0.1');
    const key = { pk: { S: 'OP#probe' } };
    await dynamo.client.send(new PutItemCommand({ TableName: dynamo.tableName, Item: { ...key, status: { S: 'working' } } }));
    const { Item } = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tableName, Key: key }));
    expect(Item?.status).toEqual({ S: 'working' });
  });

  it('close() ends the process, and a second close() is harmless', async () => {
    const dynamo = await startLocalDynamo();
    await dynamo.close();
    await dynamo.close();
    expect(alive(dynamo.pid)).toBe(false);
  });

  it('a port already taken fails the start with the reason, and leaves no process behind', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    try {
      await expect(startLocalDynamo({ port })).rejects.toThrow(/EADDRINUSE/);
    } finally {
      blocker.close();
    }
  });

  it("ends when its parent is killed (SIGKILL, so the parent's exit hooks never run)", async () => {
    // A parent that starts dynalite, prints the child's pid, then waits to be killed.
    const script = `
      const { startLocalDynamo } = await import(${JSON.stringify(new URL('../../local/dynamodb/dynamo-local.ts', import.meta.url).href)});
      const dynamo = await startLocalDynamo();
      console.log(dynamo.pid);
      setInterval(() => undefined, 1000);
    `;
    const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const pid = await new Promise<number>((resolve, reject) => {
      let out = '';
      parent.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString();
        const line = out.match(/^(\d+)\n/m);
        if (line) resolve(Number(line[1]));
      });
      parent.once('exit', (code) => reject(new Error(`parent exited (${code}) before reporting dynalite's pid`)));
    });
    expect(alive(pid)).toBe(true);
    parent.kill('SIGKILL');
    await expect.poll(() => alive(pid), { timeout: 10_000 }).toBe(false);
  });
});
