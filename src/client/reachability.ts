import {
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  ServiceError,
  type WorkflowClientInterceptor,
  type WorkflowHandle,
} from '@temporalio/client';
import { unreachableServerMessage } from '../infrastructure/connection.ts';
import { isWorkflowTaskFailing, WORKFLOW_TASK_RECOVERY_MS } from './errors.ts';

/** What a caller that rides out Temporal outages (a follower, a callback server) is told. */
export interface ReconnectOptions {
  /** Temporal stopped answering; the work resumes once it answers again. */
  onUnreachable?(error: Error): void;
  /** Temporal answers again; the work goes on from where it stopped. */
  onReconnected?(): void;
}

/** gRPC's UNAVAILABLE: no connection to the server. */
const UNAVAILABLE = 14;
/** gRPC status codes of a server that does not answer: UNAVAILABLE, DEADLINE_EXCEEDED. */
const UNREACHABLE_CODES = new Set([UNAVAILABLE, 4]);
/** One probe of a server that may be down waits at most this long. */
const PROBE_TIMEOUT_MS = 3_000;
const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5_000;

/**
 * Sends an Update again while the server refuses it because the conversation's last workflow task
 * failed or timed out: on a loaded worker a task can outlive its timeout, the server schedules it
 * again at once, and the Update is taken once that attempt completes. A refused Update was not
 * taken, so sending it again delivers it once. Past {@link WORKFLOW_TASK_RECOVERY_MS} the task keeps
 * failing (a bug, a nondeterminism error: the worker's log says) and the refusal is thrown.
 */
export async function throughFailingWorkflowTasks<T>(update: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + WORKFLOW_TASK_RECOVERY_MS;
  for (let delay = FIRST_RETRY_MS; ; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    try {
      return await update();
    } catch (error) {
      if (!isWorkflowTaskFailing(error) || Date.now() + delay > deadline) throw error;
    }
    await sleep(delay);
  }
}

/** Whether `error` (or one of its causes) says Temporal could not be reached, rather than refused a call. */
export function isUnreachable(error: unknown): boolean {
  for (let cause = error, depth = 0; cause && depth < 8; depth++) {
    const { code, message } = cause as { code?: unknown; message?: unknown };
    if (typeof code === 'number' && UNREACHABLE_CODES.has(code)) return true;
    if (typeof message === 'string' && /ECONNREFUSED|No connection established|UNAVAILABLE/.test(message)) {
      return true;
    }
    cause = (cause as { cause?: unknown }).cause;
  }
  return false;
}

/** Whether the conversation's Temporal answers now, asked with a short deadline. */
export async function reachable(handle: WorkflowHandle): Promise<boolean> {
  try {
    await handle.client.connection.withDeadline(Date.now() + PROBE_TIMEOUT_MS, () => handle.describe());
    return true;
  } catch (error) {
    if (isUnreachable(error)) return false;
    throw error;
  }
}

/**
 * Waits, with backoff, until the conversation's Temporal answers again. Resolves `false` when
 * `signal` aborts first; throws what is not an outage (the conversation is gone, say).
 */
export async function untilReachable(handle: WorkflowHandle, signal?: AbortSignal): Promise<boolean> {
  for (let delay = FIRST_RETRY_MS; !signal?.aborted; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    if (await reachable(handle)) return true;
    await sleep(delay, signal);
  }
  return false;
}

/**
 * Runs `call` until Temporal answers it: while Temporal cannot be reached, `reconnect` is told and
 * the call is tried again with backoff. Resolves `undefined` when `signal` aborts first; throws what
 * is not an outage. Without `reconnect` an outage throws, as any call's does.
 */
export async function callThroughOutages<T>(
  call: () => Promise<T>,
  reconnect: ReconnectOptions | undefined,
  signal?: AbortSignal,
): Promise<T | undefined> {
  let down = false;
  for (let delay = FIRST_RETRY_MS; !signal?.aborted; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    try {
      const result = await call();
      if (down) reconnect?.onReconnected?.();
      return result;
    } catch (error) {
      if (!reconnect || !isUnreachable(error)) throw error;
      down = true;
      reconnect.onUnreachable?.(error instanceof Error ? error : new Error(String(error)));
    }
    await sleep(delay, signal);
  }
  return undefined;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    }
  });
}

type Interceptor = ReturnType<typeof makeGrpcRetryInterceptor>;
type RetryDecider = ReturnType<typeof defaultGrpcRetryOptions>['retryableDecider'];

/**
 * What makes a client's first call to a server that is not there fail at once and say where it
 * looked: the SDK retries UNAVAILABLE for about 20 s and then reports "Failed to start Workflow",
 * the refused connection hidden in `cause`. Once a call has succeeded, UNAVAILABLE is an outage and
 * retried as before; the error still names the address.
 */
export function unreachableServerHandling(address: string): {
  grpcInterceptors: Interceptor[];
  workflowInterceptor: WorkflowClientInterceptor;
} {
  let reached = false;
  const retry = defaultGrpcRetryOptions();
  const retryableDecider: RetryDecider = (attempt, status) =>
    (reached || status.code !== UNAVAILABLE) && retry.retryableDecider(attempt, status);
  const observe = async <T>(call: () => Promise<T>): Promise<T> => {
    try {
      const result = await call();
      reached = true;
      return result;
    } catch (error) {
      throw namingAddress(error, address);
    }
  };
  return {
    grpcInterceptors: [makeGrpcRetryInterceptor({ ...retry, retryableDecider })],
    workflowInterceptor: {
      start: (input, next) => observe(() => next(input)),
      startWithDetails: (input, next) => observe(() => next(input)),
      startUpdate: (input, next) => observe(() => next(input)),
      startUpdateWithStart: (input, next) => observe(() => next(input)),
      signal: (input, next) => observe(() => next(input)),
      signalWithStart: (input, next) => observe(() => next(input)),
      query: (input, next) => observe(() => next(input)),
      terminate: (input, next) => observe(() => next(input)),
      cancel: (input, next) => observe(() => next(input)),
      describe: (input, next) => observe(() => next(input)),
    },
  };
}

/** An error whose cause chain holds gRPC UNAVAILABLE becomes one that says which address is unreachable. */
export function namingAddress(error: unknown, address: string): unknown {
  let cause: unknown = error;
  for (let depth = 0; cause !== undefined && depth < 5; depth++) {
    if (isGrpcServiceError(cause) && cause.code === UNAVAILABLE) {
      return new ServiceError(unreachableServerMessage(address, cause.details), { cause });
    }
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return error;
}
