import type { ResolvedToolPolicy } from './protocol.ts';
import type { ActivityPolicy } from './types.ts';

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

/** A tool's policy with the defaults filled in. */
export function resolveToolPolicy(policy: ActivityPolicy = {}): ResolvedToolPolicy {
  return {
    startToCloseTimeout: policy.startToCloseTimeout ?? DEFAULT_TOOL_POLICY.startToCloseTimeout,
    heartbeatTimeout: policy.heartbeatTimeout ?? DEFAULT_TOOL_POLICY.heartbeatTimeout,
    retry: { ...DEFAULT_TOOL_POLICY.retry, ...policy.retry },
    ...(policy.scheduleToStartTimeout ? { scheduleToStartTimeout: policy.scheduleToStartTimeout } : {}),
  };
}
