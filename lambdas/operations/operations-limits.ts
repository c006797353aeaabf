/** The server-wide bounds the operations core enforces; the Lambda environment and the CDK props set them. */

export interface OperationsLimits {
  /** Server-wide bound on keepAlive, seconds. */
  maxKeepAliveSeconds: number;
  /** Whether a client may be granted an unlimited (`null`) keepAlive. */
  allowUnlimitedKeepAlive: boolean;
  /** Bound on any blocking wait (synchronous runs, blocking result reads), seconds. */
  maxBlockingSeconds: number;
  /**
   * A running record not updated for this long (or its poll interval, if longer) is
   * checked against its execution, by one poller at a time. Status-sync keeps records
   * current, so this only catches lost events; the floor keeps DescribeExecution
   * (15/s per account) off the polling path.
   */
  reconcileAfterSeconds: number;
  /** Operations one principal may have running at once; the next start is refused. */
  maxActiveOperations: number;
}

export const DEFAULT_LIMITS: OperationsLimits = {
  maxKeepAliveSeconds: 7 * 24 * 3600,
  allowUnlimitedKeepAlive: false,
  maxBlockingSeconds: 50,
  reconcileAfterSeconds: 60,
  maxActiveOperations: 100,
};

/**
 * Seconds a request may run past its blocking bound: stopping the run at the bound (StopExecution,
 * DescribeExecution, the terminal write and the slot's release) and sending the answer. Every
 * round of one request shares one deadline, so no request blocks longer than the bound plus this.
 */
export const REQUEST_MARGIN_SECONDS = 15;

/**
 * The timeout the MCP function needs for a server whose blocking bound is `maxBlockingSeconds`:
 * the bound plus the margin, so Lambda never kills a request before its stop at the bound has run.
 */
export function requestTimeoutSeconds(maxBlockingSeconds: number): number {
  return maxBlockingSeconds + REQUEST_MARGIN_SECONDS;
}
