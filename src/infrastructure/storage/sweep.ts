import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { PayloadGroup, S3StorageDriver } from './s3Driver.ts';

export interface SweepResult {
  /** The workflows whose payloads were deleted, with how many objects each had. */
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
 * workflow are never deleted. Only namespaces `client` may read are swept; the others are kept.
 */
export async function sweepPayloads(
  driver: S3StorageDriver,
  client: Client,
  options: { dryRun?: boolean } = {},
): Promise<SweepResult> {
  const result: SweepResult = { deleted: [], kept: 0 };
  for (const group of await driver.listGroups()) {
    if (
      group.namespace !== client.options.namespace ||
      (await conversationExists(client, group.workflowId))
    ) {
      result.kept++;
      continue;
    }
    const objects = options.dryRun ? 0 : await driver.deleteGroup(group);
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
