import {
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
  ServiceError,
  type WorkflowClientInterceptor,
} from '@temporalio/client';

/** gRPC's UNAVAILABLE: no connection to the server. */
const UNAVAILABLE = 14;

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
      return new ServiceError(
        `Temporal at ${address} is unreachable (${cause.details}). Start a server ("yiem server" or "yiem dev"), or give the address (option address, env TEMPORAL_ADDRESS).`,
        { cause },
      );
    }
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return error;
}
