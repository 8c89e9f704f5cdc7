import type { RecordedRequest, ScriptedReply } from '../src/testing/index.ts';

/**
 * The benchmarks' model: stateless, so any number of conversations (ours and the baselines) can share
 * one server. A user message whose first line is `call TOOL xN [JSON args]` gets N calls of TOOL (the
 * lines after it pad the message to a size); anything else, and every request that ends with tool
 * results, gets the text "done".
 */
export function benchReply(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const large = largeTurnReply(messages);
  if (large) return large;
  const last = messages.at(-1);
  if (last?.role !== 'user') return { kind: 'text', text: 'done' };
  const [firstLine = ''] = textOf(last.content).trim().split('\n');
  const directive = /^call (\w+) x(\d+)(?: (\{.*\}))?$/.exec(firstLine);
  if (!directive) return { kind: 'text', text: 'done' };
  const [, name = '', count = '0', args = '{}'] = directive;
  return {
    kind: 'toolCalls',
    toolCalls: Array.from({ length: Number(count) }, () => ({ name, arguments: args })),
  };
}

/** The bench directive asking for `count` calls of `tool`. */
export function callDirective(tool: string, count: number, args?: Record<string, unknown>): string {
  return `call ${tool} x${count}${args ? ` ${JSON.stringify(args)}` : ''}`;
}

const LARGE_TURN = /^large turn (\d+)(?: tool (\d+))?\n/;

/**
 * A user message of the large-content benchmark: `large turn N` (optionally `tool KB`, asking for a
 * `largeResult` of KB kilobytes) on its first line, padded to `bytes`.
 */
export function largeTurnText(turn: number, bytes: number, toolKilobytes?: number): string {
  const head = `large turn ${turn}${toolKilobytes ? ` tool ${toolKilobytes}` : ''}\n`;
  return head + 'u'.repeat(Math.max(0, bytes - head.length));
}

/** The reply that ends large turn N. */
export function largeTurnAnswer(turn: number): string {
  return `answer ${turn}`;
}

/** The tag of large turn N's tool result. */
export function largeResultTag(turn: number): string {
  return `result ${turn}`;
}

/** Replies to large turns: the tool call they ask for, then the answer; undefined for other requests. */
function largeTurnReply(messages: RecordedRequest['body']['messages']): ScriptedReply | undefined {
  const lastUser = messages.findLast((message) => message.role === 'user');
  const directive = LARGE_TURN.exec(textOf(lastUser?.content));
  if (!directive) return undefined;
  const turn = Number(directive[1]);
  const kilobytes = directive[2] ? Number(directive[2]) : 0;
  if (kilobytes > 0 && messages.at(-1)?.role === 'user') {
    return {
      kind: 'toolCalls',
      toolCalls: [{ name: 'largeResult', arguments: { kilobytes, tag: largeResultTag(turn) } }],
    };
  }
  return { kind: 'text', text: largeTurnAnswer(turn) };
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}
