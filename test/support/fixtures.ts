import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './agentHarness.ts';

/** Where replay fixtures live; `npm run fixtures:record` rewrites the whole set. */
export const FIXTURES_DIR = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/**
 * Replays a run's history against today's workflow code; with `YIEM_RECORD_HISTORIES=1` (set by
 * `npm run fixtures:record`) also stores it as the fixture `<fixtureName>.json`, which
 * replay.test.ts then replays on every run.
 */
export async function replayAndRecord(handle: WorkflowHandle, fixtureName: string): Promise<void> {
  const history = await handle.fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, handle.workflowId);
  if (process.env.YIEM_RECORD_HISTORIES === '1') {
    await writeFile(`${FIXTURES_DIR}${fixtureName}.json`, historyToJSON(history));
  }
}
