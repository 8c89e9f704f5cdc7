import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { PayloadGroup, S3StorageDriver } from './s3Driver.ts';

/** How old a payload must be before a sweep may delete it. */
export const DEFAULT_SWEEP_MIN_AGE_MS = 60 * 60 * 1000;

export interface SweepResult {
  /** The workflows Temporal no longer has, with how many of their objects were deleted. */
  deleted: Array<PayloadGroup & { objects: number }>;
  /** How many workflows' payloads were kept. */
  kept: number;
}

/**
 * Deletes the payloads of every workflow Temporal no longer has (deleted, or removed by the
 * namespace's retention). A workflow's payloads stay while it or any workflow of its conversation
 * still exists: a sub-agent's history refers to payloads stored for its parent and the other way
 * round (a child's input, its result), and a sub-agent's id is its parent's id and `.`, so the
 * conversation's workflows are the ids that are dotted prefixes of each other. Payloads stored for no
 * workflow are never deleted. Only the namespace of `client` is swept; the others are kept.
 *
 * A client stores a new conversation's input before the server has the workflow, so payloads
 * younger than `minAgeMs` (default an hour) are kept whatever the server says.
 */
export async function sweepPayloads(
  driver: S3StorageDriver,
  client: Client,
  options: { dryRun?: boolean; minAgeMs?: number } = {},
): Promise<SweepResult> {
  const writtenBefore = new Date(Date.now() - (options.minAgeMs ?? DEFAULT_SWEEP_MIN_AGE_MS));
  const result: SweepResult = { deleted: [], kept: 0 };
  for (const group of await driver.listGroups()) {
    if (
      group.namespace !== client.options.namespace ||
      (await conversationExists(client, group.workflowId))
    ) {
      result.kept++;
      continue;
    }
    const objects = options.dryRun ? 0 : await driver.deleteGroup(group, writtenBefore);
    result.deleted.push({ ...group, objects });
  }
  return result;
}

async function conversationExists(client: Client, workflowId: string): Promise<boolean> {
  const parts = workflowId.split('.');
  for (let length = parts.length; length > 0; length--) {
    if (await workflowExists(client, parts.slice(0, length).join('.'))) return true;
  }
  const descendants = client.workflow.list({
    query: `WorkflowId STARTS_WITH ${JSON.stringify(`${workflowId}.`)}`,
  });
  for await (const _ of descendants) return true;
  return false;
}

async function workflowExists(client: Client, workflowId: string): Promise<boolean> {
  try {
    await client.workflow.getHandle(workflowId).describe();
    return true;
  } catch (error) {
    if (error instanceof WorkflowNotFoundError) return false;
    throw error;
  }
}
