/** What the core knows about a tool: its contract, how it runs, and its timing defaults. */

export type Invocation = 'sync' | 'async' | 'both';
export type WorkflowType = 'STANDARD' | 'EXPRESS';

export interface ToolTiming {
  /** Default seconds a finished result is kept. */
  keepAliveSeconds: number;
  /** Upper bound on a client's keepAlive request; `null` = unlimited allowed. */
  maxKeepAliveSeconds: number | null;
  /** How often clients should poll, in seconds. */
  pollIntervalSeconds: number;
  /** Bound on a synchronous run before it is stopped. */
  syncTimeoutSeconds: number;
  /**
   * How long a task-capable client's call waits for the execution's first questions (asked
   * in the call's own rounds) before the task is returned; 0 returns it at once.
   * @default 0
   */
  askBeforeTaskSeconds?: number;
  /**
   * The longest an execution can run: the definition's TimeoutSeconds, else the
   * service's own bound (a year for STANDARD, 5 minutes for EXPRESS). A running
   * record expires this long (plus its keepAlive) after it was created.
   */
  maxRunSeconds: number;
}

export interface ToolSpec {
  name: string;
  title?: string;
  description: string;
  /** JSON Schema (root `type: object`). */
  inputSchema: Record<string, unknown>;
  outputSchema?: Record<string, unknown>;
  invocation: Invocation;
  workflowType: WorkflowType;
  timing: ToolTiming;
  stateMachineArn: string;
  /**
   * What the execution receives: our `{ arguments, operation }` envelope, or, for a state
   * machine with its own input contract, the arguments alone.
   * @default 'envelope'
   */
  executionInput?: 'envelope' | 'arguments';
  /** Hints for clients (`readOnlyHint`, `destructiveHint`…), listed as they are written. */
  annotations?: Readonly<Record<string, unknown>>;
  /** Icons for clients to show with the tool, listed as they are written. */
  icons?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /** Metadata listed as the tool's `_meta`. */
  meta?: Readonly<Record<string, unknown>>;
}

export interface ToolCatalog {
  /** Sorted by name, so listings are deterministic. */
  readonly tools: readonly ToolSpec[];
  get(name: string): ToolSpec | undefined;
}

export function createToolCatalog(tools: readonly ToolSpec[]): ToolCatalog {
  const sorted = [...tools].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const byName = new Map(sorted.map((tool) => [tool.name, tool]));
  return { tools: sorted, get: (name) => byName.get(name) };
}
