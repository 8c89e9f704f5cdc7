/**
 * A workflow for approvalRace.test.ts: one approval with a 1 s timeout, and a "person" whose
 * decision is applied by another 1 s timer. With both timers fired in one activation, the decision
 * and the timeout meet in one workflow task, in whichever order the jobs come.
 */
import { sleep } from '@temporalio/workflow';
import type { ApprovalOutcome } from '../../../src/contract/types/approvals.ts';
import { Approvals } from '../../../workflows/approvals.ts';
import { ConversationEvents } from '../../../workflows/events.ts';

export interface ApprovalRaceResult {
  /** What the tool call got. */
  outcome: ApprovalOutcome;
  /** What the person was told: the outcome of their decision, or why it was refused. */
  answer: ApprovalOutcome | { refused: string };
}

export async function approvalRaceWorkflow(): Promise<ApprovalRaceResult> {
  const approvals = new Approvals({ timeout: '1 second', onTimeout: 'deny' }, new ConversationEvents());
  let answer: ApprovalRaceResult['answer'] = { refused: 'never decided' };
  const person = sleep('1 second').then(() => {
    try {
      answer = approvals.decide({ approvalId: 'tool-1-call_race', approve: true });
    } catch (error) {
      answer = { refused: (error as Error).message };
    }
  });
  const outcome = await approvals.request({
    approvalId: 'tool-1-call_race',
    turn: 1,
    toolCallId: 'call_race',
    toolName: 'transferMoney',
    args: {},
    reason: 'needs approval',
  });
  await person;
  return { outcome, answer };
}
