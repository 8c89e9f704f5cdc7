import { continueAsNew, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import type { ConversationCarryOver } from '../src/contract/protocol.ts';
import type { ConversationOptions } from '../src/contract/types.ts';

/**
 * Safe deploys (Worker Versioning). A conversation run is Pinned to the build it started on, so a
 * turn never replays on other code. When its deployment's current (or, for it, ramping) version
 * changes, it continues as new between turns, and the new run starts on that version
 * (`AUTO_UPGRADE` for its first task, Pinned after): nothing drains, nothing replays on new code.
 * Always false on unversioned workers.
 */
export function newVersionWaiting(): boolean {
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/** Continues as new; onto the deployment's target version when it changed (patch `yiem-upgrade-between-turns`). */
export async function continueAsNewRun(
  options: ConversationOptions,
  carried: ConversationCarryOver,
): Promise<never> {
  if (newVersionWaiting() && patched('yiem-upgrade-between-turns')) {
    return makeContinueAsNewFunc<
      (options: ConversationOptions, carried?: ConversationCarryOver) => Promise<unknown>
    >({
      initialVersioningBehavior: 'AUTO_UPGRADE',
    })(options, carried);
  }
  return continueAsNew<(options: ConversationOptions, carried?: ConversationCarryOver) => Promise<unknown>>(
    options,
    carried,
  );
}
