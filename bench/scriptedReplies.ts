import type { RecordedRequest, ScriptedReply } from '../src/testing/index.ts';

/**
 * The benchmarks' model: stateless, so any number of conversations (ours and the baselines) can share
 * one server. A user message `call TOOL xN [JSON args]` gets N calls of TOOL; anything else, and every
 * request that ends with tool results, gets the text "done".
 */
export function benchReply(request: RecordedRequest): ScriptedReply {
  const messages = request.body.messages;
  const last = messages.at(-1);
  if (last?.role !== 'user') return { kind: 'text', text: 'done' };
  const directive = /^call (\w+) x(\d+)(?: (\{.*\}))?$/.exec(textOf(last.content).trim());
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

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part: { text?: unknown }) => (typeof part.text === 'string' ? part.text : ''))
      .join('');
  }
  return '';
}
