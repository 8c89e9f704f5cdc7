import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Conversation } from '../../src/client/client.ts';
import { transcriptQuery } from '../../src/contract/definitions.ts';
import { nexusTool } from '../../src/contract/nexusTools.ts';
import type { ConversationEventItem } from '../../src/contract/types/events.ts';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';
import { replayAndRecord } from '../support/fixtures.ts';
import { EXPORTED_LINES, type OrdersNamespace, startOrdersNamespace } from '../support/nexusOrders.ts';

/** The worker's cap on a tool result, below the 100 KB `exportOrder` answers with. */
const MAX_TOOL_RESULT_BYTES = 64 * 1024;

const orderInput = {
  type: 'object',
  properties: { orderId: { type: 'string', pattern: '^[0-9]+$' } },
  required: ['orderId'],
  additionalProperties: false,
};

const toolResults = async (conversation: Conversation): Promise<ToolResultMessage[]> =>
  (await conversation.messages()).filter((m): m is ToolResultMessage => m.role === 'toolResult');

async function collectTurn(conversation: Conversation, turn: number): Promise<ConversationEventItem[]> {
  const seen: ConversationEventItem[] = [];
  for await (const event of conversation.events()) {
    if (event.turn === turn) seen.push(event);
    if (event.type === 'turnEnd' && event.turn === turn) return seen;
  }
  return seen;
}

describe("Nexus operations as tools, served by another namespace's worker", () => {
  let orders: OrdersNamespace;
  let agent: TestAgent;
  beforeAll(async () => {
    orders = await startOrdersNamespace(inject('temporalAddress'));
    const { endpoint } = orders;
    const service = 'orders';
    agent = await startTestAgent({
      maxToolResultBytes: MAX_TOOL_RESULT_BYTES,
      tools: [
        nexusTool({
          name: 'lookUpOrder',
          description: "Looks up an order's status",
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'lookUpOrder',
        }),
        nexusTool({
          name: 'shipOrder',
          description: 'Ships an order',
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'shipOrder',
          requiresApproval: true,
        }),
        nexusTool({
          name: 'packOrder',
          description: 'Packs an order',
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'packOrder',
        }),
        nexusTool({
          name: 'weighOrder',
          description: 'Weighs an order',
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'weighOrder',
          scheduleToCloseTimeout: '2 seconds',
        }),
        nexusTool({
          name: 'cancelOrder',
          description: 'Cancels an order',
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'cancelOrder',
        }),
        nexusTool({
          name: 'trackParcel',
          description: 'Tracks a parcel',
          inputSchema: orderInput,
          endpoint: `${endpoint}-never-created`,
          service,
          operation: 'trackParcel',
        }),
        nexusTool({
          name: 'exportOrder',
          description: "Exports an order's lines",
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'exportOrder',
        }),
        nexusTool({
          name: 'refundOrder',
          description: 'Refunds an order',
          inputSchema: orderInput,
          endpoint,
          service,
          operation: 'refundOrder',
        }),
      ],
    });
  });
  afterAll(async () => {
    await agent?.close();
    await orders?.close();
  });
  afterEach(() => agent.model.reset());

  it("keeps a 100 KB result by reference, cut at the worker's maxToolResultBytes, as an activity tool's result", async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_export', name: 'exportOrder', arguments: { orderId: '7' } }],
      },
      { kind: 'text', text: 'Exported.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    expect(await conversation.send('export order 7')).toMatchObject({
      status: 'completed',
      reply: 'Exported.',
    });
    const whole = JSON.stringify({ orderId: '7', lines: EXPORTED_LINES });
    expect(whole.length).toBeGreaterThan(100_000);

    // The workflow keeps an outline; the payload store holds the result.
    const { messages: kept } = await conversation.handle.query(transcriptQuery);
    expect(kept.find((entry) => entry.role === 'toolResult')).toMatchObject({
      toolCallId: 'call_export',
      content: [],
      details: {},
      stored: { bytes: expect.any(Number) },
    });
    // The client and the model read it whole, up to the cap, with the note on what was cut.
    const [result] = await toolResults(conversation);
    const note = `[Tool result truncated: it had ${whole.length} bytes and only the first ${MAX_TOOL_RESULT_BYTES} are shown. Ask for a narrower result if you need the rest.]`;
    expect(result?.content).toEqual([
      { type: 'text', text: whole.slice(0, MAX_TOOL_RESULT_BYTES) },
      { type: 'text', text: note },
    ]);
    expect(result?.details).toEqual({
      truncated: true,
      originalBytes: JSON.stringify({ output: JSON.parse(whole) }).length,
    });
    const sent = String(agent.model.requests[1]?.body.messages.at(-1)?.content);
    expect(sent.startsWith(whole.slice(0, MAX_TOOL_RESULT_BYTES))).toBe(true);
    expect(sent.endsWith(note)).toBe(true);
  });

  it("runs a sync operation: the handler's output is the result the model reads, with the usual events", async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_look', name: 'lookUpOrder', arguments: { orderId: '42' } }],
      },
      { kind: 'text', text: 'Order 42 is packed.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    const followed = collectTurn(conversation, 1);
    expect(await conversation.send('where is order 42?')).toMatchObject({
      status: 'completed',
      reply: 'Order 42 is packed.',
    });
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({
      toolCallId: 'call_look',
      toolName: 'lookUpOrder',
      isError: false,
      details: { output: { orderId: '42', status: 'packed' } },
    });
    expect(agent.model.requests[1]?.body.messages.at(-1)).toMatchObject({
      role: 'tool',
      content: JSON.stringify({ orderId: '42', status: 'packed' }),
    });
    const tools = (await followed).filter((event) => event.type === 'toolStart' || event.type === 'toolEnd');
    expect(tools).toMatchObject([
      { type: 'toolStart', toolCallId: 'call_look', toolName: 'lookUpOrder' },
      { type: 'toolEnd', toolCallId: 'call_look', isError: false },
    ]);
    const sunk = agent.events.filter((event) => event.toolCallId === 'call_look');
    expect(sunk.map((event) => event.type)).toEqual(['toolExecutionStart', 'toolExecutionEnd']);
    await replayAndRecord(conversation.handle, 'nexus-tool-sync');
  });

  it('asks for approval before a workflow-run operation, then reads the workflow’s result', async () => {
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_ship', name: 'shipOrder', arguments: { orderId: '7' } }] },
      { kind: 'text', text: 'Order 7 ships with Posta.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    const reply = conversation.send('ship order 7');
    await expect
      .poll(async () => (await conversation.status()).pendingApprovals.map((a) => a.toolCallId), {
        timeout: 20_000,
      })
      .toEqual(['call_ship']);
    expect(await toolResults(conversation)).toEqual([]);
    await conversation.approve('call_ship');
    expect(await reply).toMatchObject({ status: 'completed', reply: 'Order 7 ships with Posta.' });
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({
      toolCallId: 'call_ship',
      isError: false,
      details: { output: { orderId: '7', carrier: 'Posta' } },
    });
    await replayAndRecord(conversation.handle, 'nexus-tool-workflow-run');
  });

  it('gives the model an error naming the endpoint, service and operation when the operation fails, and the turn goes on', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_refund', name: 'refundOrder', arguments: { orderId: '9' } }],
      },
      { kind: 'text', text: 'The refund failed: order 9 has no receipt.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    expect(await conversation.send('refund order 9')).toMatchObject({
      status: 'completed',
      reply: 'The refund failed: order 9 has no receipt.',
    });
    const [result] = await toolResults(conversation);
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toBe(
      `Tool "refundOrder" failed: Nexus operation "refundOrder" of service "orders" at endpoint "${orders.endpoint}": order 9 has no receipt to refund`,
    );
  });

  it('says so when the operation times out (a retried handler error) or the service has no such operation', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'call_weigh', name: 'weighOrder', arguments: { orderId: '3' } },
          { id: 'call_cancel', name: 'cancelOrder', arguments: { orderId: '3' } },
        ],
      },
      { kind: 'text', text: 'Neither worked.' },
    );
    const conversation = await agent.client.startConversation({
      systemPrompt: 'Help with orders.',
      toolExecution: 'parallel',
    });
    expect(await conversation.send('weigh and cancel order 3')).toMatchObject({ reply: 'Neither worked.' });
    const where = (operation: string) =>
      `Nexus operation "${operation}" of service "orders" at endpoint "${orders.endpoint}"`;
    expect(
      (await toolResults(conversation)).map((result) => [result.isError, result.content[0]?.text]),
    ).toEqual([
      [true, `Tool "weighOrder" failed: ${where('weighOrder')}: timed out (SCHEDULE_TO_CLOSE)`],
      [
        true,
        `Tool "cancelOrder" failed: ${where('cancelOrder')}: Operation handler not registered for operation 'cancelOrder' in service 'orders'`,
      ],
    ]);
  });

  it("cancelling the turn ends the call at once and cancels the handler's workflow", async () => {
    const orderId = String(Date.now());
    agent.model.enqueue(
      { kind: 'toolCalls', toolCalls: [{ id: 'call_pack', name: 'packOrder', arguments: { orderId } }] },
      { kind: 'text', text: 'Stopped.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    const reply = conversation.send(`pack order ${orderId}`);
    const packing = orders.client.workflow.getHandle(`pack-${orderId}`);
    await expect
      .poll(async () => (await packing.describe().catch(() => undefined))?.status.name, { timeout: 20_000 })
      .toBe('RUNNING');
    expect(await conversation.cancel()).toBe(true);
    expect(await reply).toMatchObject({ status: 'cancelled' });
    const [result] = await toolResults(conversation);
    expect(result).toMatchObject({ toolCallId: 'call_pack', isError: true });
    expect(result?.content[0]?.text).toBe('Tool "packOrder" was cancelled before it finished.');
    await expect
      .poll(async () => (await packing.describe()).status.name, { timeout: 20_000 })
      .toBe('CANCELLED');
  });

  it('answers a call of an endpoint the server does not have with an error, instead of a stuck workflow task', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_track', name: 'trackParcel', arguments: { orderId: '5' } }],
      },
      { kind: 'text', text: 'Tracking is not set up.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    expect(await conversation.send('track order 5')).toMatchObject({
      status: 'completed',
      reply: 'Tracking is not set up.',
    });
    const [result] = await toolResults(conversation);
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toContain(
      `the Temporal server has no Nexus endpoint "${orders.endpoint}-never-created"`,
    );
  });

  it('checks the arguments in PREPARE like any tool: a bad call never reaches the handler', async () => {
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [{ id: 'call_bad', name: 'lookUpOrder', arguments: { orderId: 'x' } }],
      },
      { kind: 'text', text: 'That is not an order number.' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: 'Help with orders.' });
    await conversation.send('where is order x?');
    const [result] = await toolResults(conversation);
    expect(result?.isError).toBe(true);
    expect(result?.content[0]?.text).toContain('Invalid arguments for tool "lookUpOrder"');
  });
});
