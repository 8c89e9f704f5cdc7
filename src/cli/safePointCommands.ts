import { WorkflowUpdateStage } from '@temporalio/client';
import { formatSpend, parseLimits } from '../contract/budget.ts';
import { resumeUpdate } from '../contract/definitions.ts';
import type { BudgetChange } from '../contract/types/spend.ts';
import { connectedClient } from './commands.ts';
import { actionPricePerMillion, type ConnectionFlags, connectionConfig } from './config.ts';

/** `yiem pause`: the running turn stops at its next safe point and no turn starts until `yiem resume`. */
export async function pauseCommand(id: string, flags: ConnectionFlags & { refuse?: boolean }): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const prompts = flags.refuse ? 'refuse' : 'queue';
    const running = await client.getConversation(id).pause({ prompts });
    const what = prompts === 'refuse' ? 'new prompts are refused' : 'new prompts wait';
    console.log(
      running
        ? `Paused ${id}: its running turn stops at its next safe point; ${what} until yiem resume ${id}.`
        : `Paused ${id}: no turn starts, and ${what}, until yiem resume ${id}.`,
    );
  } finally {
    await client.close();
  }
}

/**
 * `yiem resume`: lifts a pause and continues a stopped turn. It returns once the conversation took
 * the resume (the turn may run on for long); a refusal (a budget still exhausted) is the error.
 */
export async function resumeCommand(id: string, flags: ConnectionFlags): Promise<void> {
  const client = await connectedClient(connectionConfig(flags));
  try {
    const conversation = client.getConversation(id);
    await conversation.handle
      .startUpdate(resumeUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED })
      .catch((error: unknown) => {
        throw new Error((error as { cause?: Error }).cause?.message ?? String(error));
      });
    const status = await conversation.status();
    console.log(`Resumed ${id}: ${status.state}, turn ${status.turn}.`);
  } finally {
    await client.close();
  }
}

/** `yiem budget`: shows the budget and the spend; `--turn`/`--conversation` change limits, `--resume` goes on. */
export async function budgetCommand(
  id: string,
  flags: ConnectionFlags & { turn?: string; conversation?: string; resume?: boolean },
): Promise<void> {
  const change: BudgetChange = {
    ...(flags.turn ? { turn: parseLimits(flags.turn, '--turn') } : {}),
    ...(flags.conversation ? { conversation: parseLimits(flags.conversation, '--conversation') } : {}),
  };
  const client = await connectedClient(connectionConfig(flags));
  try {
    const conversation = client.getConversation(id);
    if (flags.turn || flags.conversation) await conversation.raiseBudget(change);
    if (flags.resume) {
      await conversation.handle
        .startUpdate(resumeUpdate, { waitForStage: WorkflowUpdateStage.ACCEPTED })
        .catch((error: unknown) => {
          throw new Error((error as { cause?: Error }).cause?.message ?? String(error));
        });
    }
    const status = await conversation.status();
    console.log(`${id}  ${status.state}  turn ${status.turn}`);
    // Workers from before budgets report none.
    if (!status.spend) return;
    for (const scope of ['conversation', 'turn'] as const) {
      const limits = Object.entries(status.budget[scope] ?? {}).map(
        ([figure, value]) => `${figure}=${value}`,
      );
      console.log(`  ${scope} budget: ${limits.length > 0 ? limits.join(', ') : 'none'}`);
      console.log(`  ${scope} spent: ${formatSpend(status.spend[scope], actionPricePerMillion())}`);
    }
  } finally {
    await client.close();
  }
}
