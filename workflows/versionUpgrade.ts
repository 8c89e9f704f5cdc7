import { continueAsNew, makeContinueAsNewFunc, patched, workflowInfo } from '@temporalio/workflow';
import type { ConversationCarryOver } from '../src/contract/protocol.ts';
import type { ConversationOptions } from '../src/contract/types/conversation.ts';
import { type ConversationState, carryOver } from './state.ts';

type Continued = (options: ConversationOptions, carried?: ConversationCarryOver) => Promise<unknown>;

/**
 * Safe deploys (Worker Versioning). A conversation run is Pinned to the build it started on, so a
 * turn never replays on other code. When its deployment's current (or, for it, ramping) version
 * changes, it continues as new between turns, and the new run starts on that version
 * (`AUTO_UPGRADE` for its first task, Pinned after): nothing drains, nothing replays on new code.
 * Always false on unversioned workers. A run that just moved moves again only after a turn, so a
 * target it cannot reach (a version override, say) never chains runs without end.
 */
export function newVersionWaiting(state: ConversationState): boolean {
  if (state.startedOnNewVersion && state.turnsThisRun === 0) return false;
  return workflowInfo().targetWorkerDeploymentVersionChanged;
}

/** Continues as new; onto the deployment's target version when it changed (patch `yiem-upgrade-between-turns`). */
export async function continueAsNewRun(
  state: ConversationState,
  options: ConversationOptions,
): Promise<never> {
  if (newVersionWaiting(state) && patched('yiem-upgrade-between-turns')) {
    return makeContinueAsNewFunc<Continued>({ initialVersioningBehavior: 'AUTO_UPGRADE' })(options, {
      ...carryOver(state),
      movedToNewVersion: true,
    });
  }
  return continueAsNew<Continued>(options, carryOver(state));
}
