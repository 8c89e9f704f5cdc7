import {
  AbstractChat,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  DefaultChatTransport,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';

/** The AI SDK's `Chat` for Node: `AbstractChat` with plain state, as `@ai-sdk/react` keeps it in React. */
export class NodeChat extends AbstractChat<UIMessage> {
  constructor({ messages = [], ...init }: ChatInit<UIMessage>) {
    super({ ...init, state: new PlainChatState(messages) });
  }
}

class PlainChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined;
  messages: UIMessage[];
  constructor(messages: UIMessage[]) {
    this.messages = messages;
  }
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = this.messages.map((old, at) => (at === index ? message : old));
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}

/** A transport on `api` that also records every chunk it receives, in order, per response. */
export function recordingTransport(
  api: string,
  options: { headers?: Record<string, string>; fetch?: typeof fetch } = {},
): { transport: DefaultChatTransport<UIMessage>; responses: UIMessageChunk[][] } {
  const responses: UIMessageChunk[][] = [];
  class Recording extends DefaultChatTransport<UIMessage> {
    protected override processResponseStream(
      stream: ReadableStream<Uint8Array>,
    ): ReadableStream<UIMessageChunk> {
      const received: UIMessageChunk[] = [];
      responses.push(received);
      return super.processResponseStream(stream).pipeThrough(
        new TransformStream<UIMessageChunk, UIMessageChunk>({
          transform(chunk, controller) {
            received.push(chunk);
            controller.enqueue(chunk);
          },
        }),
      );
    }
  }
  return { transport: new Recording({ api, ...options }), responses };
}
