import { QueryNotRegisteredError, ServiceError, WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { ConversationQueryError, ConversationRefusedError, inCallersWords } from '../../src/client/errors.ts';

describe("Temporal's failures in the caller's words", () => {
  it("names the conversation and the workflow's reason of a refused Update, keeping Temporal's error", () => {
    const reason = ApplicationFailure.create({ message: 'Nothing waits for approval "x"' });
    const error = inCallersWords(
      new WorkflowUpdateFailedError('Workflow Update failed', reason),
      'c-1',
      'decideToolCall',
    );
    expect(error).toBeInstanceOf(ConversationRefusedError);
    expect(error).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((error as Error).message).toBe(
      'Conversation c-1 refused the decision: Nothing waits for approval "x"',
    );
    expect((error as ConversationRefusedError).cause).toBe(reason);
  });

  it('says no worker answered a query that timed out, and names a query the worker does not know', () => {
    const timedOut = inCallersWords(
      new ServiceError('Failed to query Workflow', {
        cause: Object.assign(new Error('deadline'), { code: 4 }),
      }),
      'c-2',
      'the status',
    );
    expect(timedOut).toBeInstanceOf(ConversationQueryError);
    expect((timedOut as Error).message).toBe(
      'Reading the status of conversation c-2 failed: no worker answered (is a worker running on its task queue?)',
    );
    const unknown = inCallersWords(new QueryNotRegisteredError('no query "spend"', 3), 'c-3', 'the spend');
    expect((unknown as Error).message).toContain(
      'Reading the spend of conversation c-3 failed: its worker does not answer this query',
    );
  });

  it('leaves other errors as they are', () => {
    const other = new Error('boom');
    expect(inCallersWords(other, 'c-4', 'prompt')).toBe(other);
  });
});
