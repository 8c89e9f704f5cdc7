import type { Client } from '@temporalio/client';
import { WorkflowNotFoundError } from '@temporalio/client';
import type { StorageDriverTargetInfo } from '@temporalio/common';

/** The workflow a group of stored payloads belongs to (the SDK's store target). */
export interface PayloadGroup {
  /** The workflow's namespace. */
  namespace: string;
  /** The workflow's id: a conversation's id. */
  workflowId: string;
}

/** A payload store whose payloads are grouped by the workflow that stored them, so it can be swept. */
export interface SweepableStore {
  /** Where the store is, for messages. */
  readonly location: string;
  /** Every workflow that has payloads in the store. */
  listGroups(): Promise<PayloadGroup[]>;
  /** Deletes the payloads of `group` written before `writtenBefore` (default: all); returns how many. */
  deleteGroup(group: PayloadGroup, writtenBefore?: Date): Promise<number>;
}

/** Where the groups are: namespaces under it, workflows under each. */
export const GROUPS_ROOT = 'workflows/';
/** Payloads stored for no workflow (a standalone activity's): the sweeper never touches them. */
const UNOWNED = 'unowned/';

/**
 * The folder (file store) or key prefix (S3) of the payloads `target` stores:
 * `workflows/<namespace>/<workflow id>/`, or `unowned/`. Each name is URI-encoded with its dots
 * too, so no id is read as `.` or `..` by a file system.
 */
export function payloadGroupPath(target: StorageDriverTargetInfo | undefined): string {
  if (target?.kind !== 'workflow' || !target.id) return UNOWNED;
  return `${GROUPS_ROOT}${groupSegment(target.namespace)}/${groupSegment(target.id)}/`;
}

/** The path of `group`'s payloads, as {@link payloadGroupPath} names it. */
export function pathOfGroup(group: PayloadGroup): string {
  return payloadGroupPath({ kind: 'workflow', namespace: group.namespace, id: group.workflowId });
}

/** A group path's segment back to the name it encodes. */
export function groupName(segment: string): string {
  return decodeURIComponent(segment);
}

/** Whether `path` is one {@link payloadGroupPath} makes (a claim names it; nothing else may reach a file). */
export function isPayloadGroupPath(path: string): boolean {
  return path === UNOWNED || /^workflows\/[A-Za-z0-9%_~!*'()-]+\/[A-Za-z0-9%_~!*'()-]+\/$/.test(path);
}

function groupSegment(name: string): string {
  return encodeURIComponent(name).replaceAll('.', '%2E');
}

/** How old a payload must be before a sweep may delete it. */
export const DEFAULT_SWEEP_MIN_AGE_MS = 60 * 60 * 1000;

/** What `sweepPayloads` deleted and kept. */
export interface SweepResult {
  /** The workflows Temporal no longer has, with how many of their objects were deleted. */
  deleted: Array<
    PayloadGroup & {
      /** Objects deleted (or, with `dryRun`, to be deleted). */
      objects: number;
    }
  >;
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
  driver: SweepableStore,
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
