/**
 * hashForLog remembers recent ids' hashes: what it answers is still the first 16 hex digits of
 * the id's SHA-256, for a remembered id, for one past the memory's size, and for a long id it
 * never keeps.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hashForLog } from '../../lambdas/observability/request-context.ts';

const sha256Prefix = (value: string) => createHash('sha256').update(value).digest('hex').slice(0, 16);

describe('hashForLog', () => {
  it('answers the sha256 prefix, remembered or not', () => {
    expect(hashForLog('task-1')).toBe(sha256Prefix('task-1'));
    expect(hashForLog('task-1')).toBe(sha256Prefix('task-1'));
    for (let i = 0; i < 300; i++) expect(hashForLog(`op-${i}`)).toBe(sha256Prefix(`op-${i}`));
    expect(hashForLog('task-1')).toBe(sha256Prefix('task-1'));
    const long = 'x'.repeat(5000);
    expect(hashForLog(long)).toBe(sha256Prefix(long));
  });
});
