import { randomUUID } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { Client, Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time.js';
import { startWorkflow, WorkflowRunOperationHandler } from '@temporalio/nexus';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import * as nexus from 'nexus-rpc';

/** The handler's service: what another team's namespace offers, known to the caller by names only. */
export const ordersService = nexus.service('orders', {
  /** Answered at once by the handler (a sync operation). */
  lookUpOrder: nexus.operation<{ orderId: string }, { orderId: string; status: string }>(),
  /** Runs the `shipOrder` workflow in the handler's namespace (a workflow-run operation). */
  shipOrder: nexus.operation<{ orderId: string }, { orderId: string; carrier: string }>(),
  /** Runs the `packOrder` workflow, which never finishes unless cancelled (workflow id `pack-<orderId>`). */
  packOrder: nexus.operation<{ orderId: string }, void>(),
  /** Throws a plain error, which Nexus retries until the caller's timeout. */
  weighOrder: nexus.operation<{ orderId: string }, never>(),
  /** Always fails, as a handler does when the request cannot be served. */
  refundOrder: nexus.operation<{ orderId: string }, never>(),
  /** Answers at once with the order's lines: {@link EXPORTED_LINES}, some 100 KB. */
  exportOrder: nexus.operation<{ orderId: string }, { orderId: string; lines: string }>(),
});

/** What `exportOrder` answers with: 100 KB of lines, above any inline size. */
export const EXPORTED_LINES = Array.from({ length: 4_000 }, (_, index) =>
  `line ${index} `.padEnd(25, '.'),
).join('\n');

const ordersHandler = nexus.serviceHandler(ordersService, {
  lookUpOrder: async (_ctx, { orderId }) => ({ orderId, status: 'packed' }),
  shipOrder: new WorkflowRunOperationHandler<{ orderId: string }, { orderId: string; carrier: string }>(
    (ctx, input) =>
      startWorkflow(ctx, 'shipOrder', { workflowId: `ship-${input.orderId}-${randomUUID()}`, args: [input] }),
  ),
  packOrder: new WorkflowRunOperationHandler<{ orderId: string }, void>((ctx, input) =>
    startWorkflow(ctx, 'packOrder', { workflowId: `pack-${input.orderId}`, args: [input] }),
  ),
  weighOrder: async () => {
    throw new Error('the scales are offline');
  },
  refundOrder: async (_ctx, { orderId }) => {
    throw new nexus.OperationError('failed', `order ${orderId} has no receipt to refund`);
  },
  exportOrder: async (_ctx, { orderId }) => ({ orderId, lines: EXPORTED_LINES }),
});

/** A namespace of its own with the orders service's worker, and an endpoint that targets it. */
export interface OrdersNamespace {
  namespace: string;
  endpoint: string;
  /** A client of the orders namespace, to look at the handler's workflows. */
  client: Client;
  close(): Promise<void>;
}

export async function startOrdersNamespace(address: string): Promise<OrdersNamespace> {
  const id = randomUUID().slice(0, 8);
  const namespace = `orders-${id}`;
  const taskQueue = `orders-${id}`;
  const endpoint = `orders-${id}`;
  const connection = await Connection.connect({ address });
  await connection.workflowService.registerNamespace({
    namespace,
    workflowExecutionRetentionPeriod: msToTs('1 day'),
  });
  const { endpoint: created } = await connection.operatorService.createNexusEndpoint({
    spec: { name: endpoint, target: { worker: { namespace, taskQueue } } },
  });
  const native = await NativeConnection.connect({ address });
  const worker = await createWorkerOnceKnown(native, namespace, taskQueue);
  const running = worker.run();
  return {
    namespace,
    endpoint,
    client: new Client({ connection, namespace }),
    async close() {
      worker.shutdown();
      await running;
      await native.close();
      await connection.operatorService.deleteNexusEndpoint({ id: created?.id, version: created?.version });
      await connection.close();
    },
  };
}

/** A namespace just registered reaches every server service a moment later: retried until the worker starts. */
async function createWorkerOnceKnown(
  connection: NativeConnection,
  namespace: string,
  taskQueue: string,
): Promise<Worker> {
  const workflowBundle = await bundleWorkflowCode({
    workflowsPath: fileURLToPath(new URL('./workflows/orders.ts', import.meta.url)),
    logger: { trace() {}, debug() {}, info() {}, warn() {}, error: console.error, log() {} } as never,
  });
  for (let attempt = 1; ; attempt++) {
    try {
      return await Worker.create({
        connection,
        namespace,
        taskQueue,
        workflowBundle,
        nexusServices: [ordersHandler],
      });
    } catch (error) {
      if (attempt >= 50 || !/namespace/i.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}
