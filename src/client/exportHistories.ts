import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Client } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils.js';

/** Which runs `exportHistories` writes. */
export interface ExportHistoriesOptions {
  /** A visibility query. Default: every conversation, `WorkflowType = 'conversationWorkflow'`. */
  query?: string;
  /** At most this many runs. Default 100. */
  limit?: number;
}

/** One exported run. */
export interface ExportedHistory {
  /** The conversation (workflow id). */
  conversationId: string;
  /** The run exported. */
  runId: string;
  /** The file written, `<conversation id>__<run id>.json` in the folder. */
  file: string;
  /** Events in the history. */
  events: number;
}

const CONVERSATIONS_QUERY = "WorkflowType = 'conversationWorkflow'";

/**
 * Writes the histories of the runs a visibility query finds (each continue-as-new run is its own),
 * one JSON file per run, as Temporal's `historyToJSON` writes them, for `replayCheck` to replay
 * against later code. Payloads are written as the server holds them (encrypted when the workers
 * encrypt), so replaying needs the same keys.
 */
export async function exportHistories(
  client: Client,
  dir: string,
  options: ExportHistoriesOptions = {},
): Promise<ExportedHistory[]> {
  const limit = options.limit ?? 100;
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(`limit ${limit}: expected a whole number above 0`);
  await mkdir(dir, { recursive: true });
  const exported: ExportedHistory[] = [];
  for await (const run of client.workflow.list({ query: options.query ?? CONVERSATIONS_QUERY })) {
    if (exported.length >= limit) break;
    const history = await client.workflow.getHandle(run.workflowId, run.runId).fetchHistory();
    const file = `${encodeURIComponent(run.workflowId)}__${run.runId}.json`;
    await writeFile(path.join(dir, file), historyToJSON(history));
    exported.push({
      conversationId: run.workflowId,
      runId: run.runId,
      file,
      events: history.events?.length ?? 0,
    });
  }
  return exported;
}
