/**
 * The public contract of yiem-agent, layer 0: the words every other subject is written in (JSON
 * Schema, tool arguments, text content, token usage, an activity's timeouts and retries).
 *
 * The contract is a folder of files by subject, in layers (`src/contract/types.ts` re-exports them
 * all; `CONTRACT_TYPE_LAYERS` in `.dependency-cruiser.cjs` holds the order): a file imports only
 * files of lower layers, so there are no circles. Types used inside workflow code must stay plain
 * data (no functions, no classes) so that they serialise into Temporal history unchanged.
 */

/** A JSON Schema (MCP format) describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/** Plain JSON-like arguments a tool receives after preparation and validation. */
export type ToolArguments = Record<string, unknown>;

/** A block of text in a tool result or a message. */
export interface TextContent {
  /** Always `'text'`: the only kind of content yet, named so that others can follow. */
  type: 'text';
  /** The text. */
  text: string;
}

/** Token accounting reported by a model or a tool that spends tokens itself. */
export interface Usage {
  /** Tokens of the prompt the model read. */
  inputTokens: number;
  /** Tokens it wrote. */
  outputTokens: number;
  /** Both, as the endpoint counts them (budgets count these). */
  totalTokens: number;
  /**
   * What the call cost, in the currency of the worker's price table (`ModelSettings.prices`); absent
   * when the worker has no price for the model.
   */
  cost?: number;
}

/** How an activity is timed and retried. Durations are Temporal duration strings (`'30 seconds'`). */
export interface ActivityPolicy {
  /** Longest a single attempt may run. Default `'5 minutes'`. */
  startToCloseTimeout?: string;
  /** A live tool heartbeats at least this often; a dead worker is noticed within it. Default `'30 seconds'`. */
  heartbeatTimeout?: string;
  /**
   * Longest a tool call may wait on its task queue for a worker to take it (tools only). Default: no
   * limit. Stateful MCP servers set it (default `'30 seconds'`) so a call pinned to a dead worker fails.
   */
  scheduleToStartTimeout?: string;
  /**
   * A call whose worker died this many times (attempts ended by a missed heartbeat: killed, out of
   * memory, crashed) fails for good, whatever attempts `retry` has left; 0: never (tools only; model
   * calls use the worker's `worker.maxWorkerDeaths`). Default: the worker's, else 5.
   */
  maxWorkerDeaths?: number;
  /** Retries for thrown errors and lost workers. Defaults: 3 attempts, 1 s first interval, doubling. */
  retry?: {
    /** Attempts in all, the first included (1: no retry). Tools default 3, model calls 5. */
    maximumAttempts?: number;
    /** Wait before the first retry. Default `'1 second'`. */
    initialInterval?: string;
    /** What each wait is multiplied by for the next. Default 2. */
    backoffCoefficient?: number;
    /** Longest wait between attempts. Tools default `'1 minute'`, model calls `'30 seconds'`. */
    maximumInterval?: string;
  };
}
