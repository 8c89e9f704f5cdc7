import type { ActivityInterceptorsFactory } from '@temporalio/worker';

/**
 * Holds every execution of one activity type at its start until `release()`: a real worker
 * interceptor, so a test can act while the workflow waits on that activity.
 */
export interface ActivityGate {
  /** Pass in the worker's `interceptors.activity`. */
  interceptor: ActivityInterceptorsFactory;
  /** Starts holding executions (a gate starts open). */
  close(): void;
  /** Resolves once an execution is being held. */
  reached(): Promise<void>;
  /** Lets held and later executions run. */
  release(): void;
}

export function activityGate(activityType: string): ActivityGate {
  let closed = false;
  let opened: Promise<void> = Promise.resolve();
  let open = (): void => {};
  let reached: Promise<void> = Promise.resolve();
  let arrive = (): void => {};
  return {
    interceptor: (context) => ({
      inbound: {
        async execute(input, next) {
          if (closed && context.info.activityType === activityType) {
            arrive();
            await opened;
          }
          return next(input);
        },
      },
    }),
    close() {
      closed = true;
      opened = new Promise((resolve) => {
        open = resolve;
      });
      reached = new Promise((resolve) => {
        arrive = resolve;
      });
    },
    reached: () => reached,
    release() {
      closed = false;
      open();
    },
  };
}
