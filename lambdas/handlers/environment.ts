/**
 * Reads the Lambda environment the CDK construct sets (ENV in operations-table.ts).
 * Called once at module init; a missing or malformed variable fails the cold start
 * with a message naming it.
 */
import { ENV } from '../aws/operations-table.ts';
import { DEFAULT_LIMITS, type OperationsLimits } from '../operations/operations-service.ts';

export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is required`);
  return value;
}

export function limitsFromEnv(): OperationsLimits {
  return {
    maxKeepAliveSeconds: positiveInt(ENV.maxKeepAliveSeconds, DEFAULT_LIMITS.maxKeepAliveSeconds),
    allowUnlimitedKeepAlive: process.env[ENV.allowUnlimitedKeepAlive] === 'true',
    maxBlockingSeconds: positiveInt(ENV.maxBlockingSeconds, DEFAULT_LIMITS.maxBlockingSeconds),
    reconcileAfterSeconds: DEFAULT_LIMITS.reconcileAfterSeconds,
    maxActiveOperations: positiveInt(ENV.maxActiveOperations, DEFAULT_LIMITS.maxActiveOperations),
  };
}

/** Whether handle tools are on: unset, "", "1" or "true" leaves them on; "0" or "false" turns them off. */
export function handleToolsFromEnv(): boolean {
  const raw = process.env[ENV.handleTools];
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`Environment variable ${ENV.handleTools} must be 1 or 0`);
}

/** Whether `subscriptions/listen` serves task notifications: unset, "", "1" or "true" leaves it on; "0" or "false" turns it off. */
export function listenFromEnv(): boolean {
  const raw = process.env[ENV.listen];
  if (raw === undefined || raw === '' || raw === '1' || raw === 'true') return true;
  if (raw === '0' || raw === 'false') return false;
  throw new Error(`Environment variable ${ENV.listen} must be 1 or 0`);
}

function positiveInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`Environment variable ${name} must be a positive integer`);
  return value;
}
