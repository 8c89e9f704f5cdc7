import type { Client } from '@temporalio/client';

/**
 * Whether the worker's Temporal server says it has no Nexus endpoint named `name`. Asked in PREPARE
 * before a Nexus tool's call reaches the workflow: the server rejects the workflow task that schedules
 * an operation of an unknown endpoint, and would keep rejecting it, leaving the conversation stuck
 * instead of giving the model an error. `false` when the server does not answer (e.g. where endpoints
 * are managed outside the namespace's API, as on Temporal Cloud): the call goes ahead unchecked.
 */
export async function nexusEndpointMissing(client: Client, name: string): Promise<boolean> {
  try {
    const { endpoints } = await client.connection.operatorService.listNexusEndpoints({ name, pageSize: 1 });
    return (endpoints ?? []).length === 0;
  } catch {
    return false;
  }
}
