/**
 * A user's worker script as docs/conversations.md shows it, for tests of what such a process prints: it
 * starts an agent worker on TASK_QUEUE, prints READY, and stops when told to (a line on stdin).
 */
import { createInterface } from 'node:readline';
import { createAgentWorker } from '../../src/worker/worker.ts';

const agent = await createAgentWorker({
  connection: { address: process.env.TEMPORAL_ADDRESS ?? '', taskQueue: process.env.TASK_QUEUE ?? '' },
  models: { model: { baseURL: 'http://127.0.0.1:1/v1', model: 'unused' } },
});
const running = agent.run();
console.log('READY');
await new Promise((resolve) => createInterface({ input: process.stdin }).once('line', resolve));
await agent.shutdown();
await running;
