/** The workflows behind the workflow-run Nexus operations of test/support/nexusOrders.ts. */
import { condition } from '@temporalio/workflow';

export async function shipOrder(input: { orderId: string }): Promise<{ orderId: string; carrier: string }> {
  return { orderId: input.orderId, carrier: 'Posta' };
}

/** Packs until it is cancelled: an operation that outlives its caller's patience. */
export async function packOrder(_input: { orderId: string }): Promise<void> {
  await condition(() => false);
}
