import {
  type ActivityInterfaceFor,
  type ActivityOptions,
  type LocalActivityOptions,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';

// The conversation's Action meter: what this run asks of the server, counted by the rule in
// src/contract/actions.ts as it is asked (so replay counts the same). Module state is this
// workflow's own: the worker bundle keeps each workflow's modules apart.

let charge: ((actions: number) => void) | undefined;
let localActivitiesTask: number | undefined;

/** Where this run's Actions are charged (the conversation's `TurnControl`); other workflows charge none. */
export function meterActionsInto(charger: (actions: number) => void): void {
  charge = charger;
}

/** Counts `actions` Actions. */
export function countActions(actions = 1): void {
  charge?.(actions);
}

/** `proxyActivities`, each call one Action (an activity scheduled). */
export function meteredActivities<A extends object>(options: ActivityOptions): ActivityInterfaceFor<A> {
  return meteredProxy(proxyActivities<A>(options), countActions);
}

/**
 * `proxyLocalActivities`: all the local activities of one workflow task are one Action. A task is
 * known by the history's length, which stays the same across the activations inside one task.
 */
export function meteredLocalActivities<A extends object>(
  options: LocalActivityOptions,
): ActivityInterfaceFor<A> {
  return meteredProxy(proxyLocalActivities<A>(options), () => {
    const task = workflowInfo().historyLength;
    if (task === localActivitiesTask) return;
    localActivitiesTask = task;
    countActions();
  });
}

/**
 * An activity's attempts after its first, each billed again: known from the attempt number on the
 * events its result carries (those of the last attempt, or handed on to it). Local activities'
 * retries run inside a workflow task and are not billed apart: count none for them.
 */
export function countRetries(events: readonly { attempt: number }[] | undefined): void {
  const attempts = Math.max(1, ...(events ?? []).map((event) => event.attempt));
  if (attempts > 1) countActions(attempts - 1);
}

/** A Signal or Update handler that counts one Action each time it runs (Signals received, Updates accepted). */
export function metered<Handler extends (...args: never[]) => unknown>(handler: Handler): Handler {
  return ((...args: Parameters<Handler>) => {
    countActions();
    return handler(...args);
  }) as Handler;
}

function meteredProxy<P extends object>(proxy: P, count: () => void): P {
  return new Proxy(proxy, {
    get(target, name) {
      const call = Reflect.get(target, name) as (...args: unknown[]) => unknown;
      return (...args: unknown[]) => {
        count();
        return call(...args);
      };
    },
  });
}
