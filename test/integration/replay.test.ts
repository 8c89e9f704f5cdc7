import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { workflowBundle } from '../support/agentHarness.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/**
 * Recorded conversations must replay against today's workflow code: a change that would break
 * running conversations fails here. Such a change goes behind `patched()` (docs/developing.md).
 */
describe('replaying recorded conversation histories', () => {
  it('replays every committed history fixture', async () => {
    const files = (await readdir(FIXTURES)).filter((file) => file.endsWith('.json'));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const history = JSON.parse(await readFile(`${FIXTURES}${file}`, 'utf8'));
      await expect(
        Worker.runReplayHistory(
          { workflowBundle: await workflowBundle() },
          history,
          recordedWorkflowId(history),
        ),
        file,
      ).resolves.toBeUndefined();
    }
  });
});

/** The id the conversation ran under: a sub-agent's child workflow id is derived from its parent's. */
function recordedWorkflowId(history: {
  events: { workflowExecutionStartedEventAttributes?: { workflowId?: string } }[];
}): string | undefined {
  return history.events[0]?.workflowExecutionStartedEventAttributes?.workflowId;
}
