/**
 * `npx tsx bench/checkBatch.ts`: how long PREPARE of one model reply takes when it calls a written
 * tool whose validateCode never returns 10 times, and the longest the worker's event loop went
 * without running a timer meanwhile (a 10 ms interval). Prints JSON.
 */
import { prepareToolCalls } from '../activities/prepare.ts';
import { ToolRegistry } from '../activities/registry/registry.ts';
import { ArgumentValidator } from '../activities/registry/validation.ts';
import { transpile } from '../activities/sandbox/typescript.ts';

const CALLS = 10;
const registry = new ToolRegistry({ sandbox: { timeoutMs: 5_000 } });
const spin = registry.context.sandboxedTool?.({
  name: 'spin',
  label: 'Spin',
  description: 'validates forever',
  inputSchema: { type: 'object' },
  parallelToolExecute: true,
  executeSource: 'async function execute() { return textResult("ran"); }',
  validateSource: 'function validate(args) { for (;;) {} }',
  prepareSource: null,
});
if (!spin) throw new Error('the registry has no sandbox');
registry.registerTool(spin);
// A worker loads the TypeScript compiler once, on its first written tool; that is not measured here.
transpile('const warm = 1;');

let last = Date.now();
let longestGapMs = 0;
const probe = setInterval(() => {
  const now = Date.now();
  longestGapMs = Math.max(longestGapMs, now - last);
  last = now;
}, 10);
const started = Date.now();
await prepareToolCalls(
  { registry, validator: new ArgumentValidator(), hooks: {}, nexusEndpointMissing: async () => false },
  {
    conversationId: 'bench',
    turn: 1,
    toolCalls: Array.from({ length: CALLS }, (_, index) => ({
      type: 'function' as const,
      id: `call_${index}`,
      name: 'spin',
      arguments: {},
    })),
  },
);
const batchMs = Date.now() - started;
await new Promise((resolve) => setTimeout(resolve, 20));
clearInterval(probe);
console.log(JSON.stringify({ calls: CALLS, batchMs, longestEventLoopGapMs: longestGapMs }));
