import type { Context } from '@temporalio/activity';
import { type Client, WithStartWorkflowOperation } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import {
  reserveTokensUpdate,
  settleTokensSignal,
  TOKEN_WINDOW_MS,
  type TokenLimiterState,
  tokenLimiterWorkflowId,
} from '../src/contract/tokenLimiter.ts';
import { utf8Bytes } from '../src/contract/utf8.ts';
import { mainQueueOf, type WorkerModel } from './models/models.ts';

/** The same 4 bytes a token as `maxContextTokens` assumes. */
const BYTES_PER_TOKEN = 4;

/** A call's reserved tokens, to be corrected with its usage once it has answered. */
export interface TokenReservationHandle {
  settle(tokens: number): Promise<void>;
}

/**
 * Waits until the model's token window has room for a request of these bytes and reserves it
 * (`rateLimit.tokensPerMinute`; nothing to do without it). The window is the model's limiter
 * workflow, started on the worker's main task queue by the first call that needs it. An attempt
 * that sends several requests numbers them (`request`), so each has a reservation of its own.
 */
export async function reserveTokens(
  client: Client,
  context: Context,
  model: WorkerModel,
  requestBody: unknown,
  request?: number,
): Promise<TokenReservationHandle | undefined> {
  const limit = model.rateLimit?.tokensPerMinute;
  if (limit === undefined) return undefined;
  const tokens = Math.ceil(utf8Bytes(JSON.stringify(requestBody)) / BYTES_PER_TOKEN);
  if (tokens > limit) {
    throw ApplicationFailure.nonRetryable(
      `A call to model "${model.name}" is estimated at ${tokens} tokens, above its whole rateLimit.tokensPerMinute (${limit}): it could never be sent`,
      'TokensAboveLimit',
    );
  }
  const taskQueue = mainQueueOf(context.info.taskQueue, model.name);
  const workflowId = tokenLimiterWorkflowId(taskQueue, model.name);
  const { workflowExecution, activityId, attempt } = context.info;
  const id = `${workflowExecution?.workflowId}/${workflowExecution?.runId}/${activityId}/${attempt}${request === undefined ? '' : `/${request}`}`;
  const state: TokenLimiterState = {
    tokensPerMinute: limit,
    windowMs: model.rateLimit?.windowMs ?? TOKEN_WINDOW_MS,
    reservations: [],
  };
  for (;;) {
    const wait = await client.workflow.executeUpdateWithStart(reserveTokensUpdate, {
      args: [{ id, tokens }],
      startWorkflowOperation: new WithStartWorkflowOperation('tokenLimiterWorkflow', {
        workflowId,
        taskQueue,
        args: [state],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
    if (wait === 0) break;
    // The call's heartbeats go on meanwhile; its cancellation ends the wait.
    await context.sleep(wait);
  }
  return {
    settle: async (used) => {
      await client.workflow.getHandle(workflowId).signal(settleTokensSignal, { id, tokens: used });
    },
  };
}
