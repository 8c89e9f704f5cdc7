import { writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import type { WorkflowHandle } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { workflowBundle } from './agentHarness.ts';

const FIXTURES = fileURLToPath(new URL('../fixtures/histories/', import.meta.url));

/**
 * Replays a run's history against today's workflow code; with `YIEM_RECORD_HISTORIES=1` also stores
 * it as a fixture, which replay.test.ts then replays on every run. A committed fixture is never
 * overwritten: a history that stops replaying is a compatibility break, not a stale file.
 */
export async function replayAndRecord(handle: WorkflowHandle, fixtureName: string): Promise<void> {
  const history = await handle.fetchHistory();
  await Worker.runReplayHistory({ workflowBundle: await workflowBundle() }, history, handle.workflowId);
  if (process.env.YIEM_RECORD_HISTORIES === '1') {
    await writeFile(`${FIXTURES}${fixtureName}.json`, historyToJSON(history), { flag: 'wx' }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code !== 'EEXIST') throw error;
      },
    );
  }
}
