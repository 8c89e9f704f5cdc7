import type { PreparedToolCall, ResolvedToolPolicy, SentPreparedToolCall } from './protocol.ts';
import type { ActivityPolicy } from './types/base.ts';

export const DEFAULT_TOOL_POLICY: ResolvedToolPolicy = {
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '30 seconds',
  retry: {
    maximumAttempts: 3,
    initialInterval: '1 second',
    backoffCoefficient: 2,
    maximumInterval: '1 minute',
  },
};

/**
 * A `localActivity` tool's attempt without a timeout of its own: it holds its workflow task open
 * while it runs, so it gets seconds, not the minutes of an activity.
 */
export const LOCAL_TOOL_START_TO_CLOSE_TIMEOUT = '10 seconds';

/** A tool's policy with the defaults filled in (`local`: a `localActivity` tool's). */
export function resolveToolPolicy(policy: ActivityPolicy = {}, local = false): ResolvedToolPolicy {
  const defaultTimeout = local ? LOCAL_TOOL_START_TO_CLOSE_TIMEOUT : DEFAULT_TOOL_POLICY.startToCloseTimeout;
  return {
    startToCloseTimeout: policy.startToCloseTimeout ?? defaultTimeout,
    heartbeatTimeout: policy.heartbeatTimeout ?? DEFAULT_TOOL_POLICY.heartbeatTimeout,
    retry: { ...DEFAULT_TOOL_POLICY.retry, ...policy.retry },
    ...(policy.scheduleToStartTimeout ? { scheduleToStartTimeout: policy.scheduleToStartTimeout } : {}),
  };
}

const isDefaultPolicy = (policy: ResolvedToolPolicy, local: boolean): boolean =>
  JSON.stringify(policy) === JSON.stringify(resolveToolPolicy(undefined, local));

/** `call` without its policy when that is the default (for its kind): about 200 bytes of history a call. */
export function withoutDefaultPolicy(call: PreparedToolCall): SentPreparedToolCall {
  if (call.kind !== 'ready' || !isDefaultPolicy(call.policy, call.localActivity === true)) return call;
  const { policy: _default, ...rest } = call;
  return rest;
}

/** `call` as PREPARE made it: a policy left out is the default. */
export function withDefaultPolicy(call: SentPreparedToolCall): PreparedToolCall {
  if (call.kind !== 'ready' || call.policy) return call as PreparedToolCall;
  return { ...call, policy: resolveToolPolicy(undefined, call.localActivity === true) };
}
