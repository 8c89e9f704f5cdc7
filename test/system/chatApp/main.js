/**
 * A tiny web app built from the AI SDK's own packages (`@ai-sdk/react`'s `useChat`, `ai`'s
 * `DefaultChatTransport`), as a team would write it, for test/system/chatBrowser.test.ts. Plain
 * JavaScript without JSX, so that Vite builds it without a React plugin and no React types are needed.
 */
import { useChat } from '@ai-sdk/react';
import { DefaultChatTransport, isToolUIPart, lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { createElement as h, useState } from 'react';
import { createRoot } from 'react-dom/client';

const query = new URL(window.location.href).searchParams;
const chatId = query.get('chat') ?? 'chat';
const token = query.get('token');

function App() {
  const [input, setInput] = useState('');
  const { messages, sendMessage, addToolApprovalResponse, status, error } = useChat({
    id: chatId,
    resume: true,
    transport: new DefaultChatTransport({
      api: '/api/chat',
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    }),
    sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
  });
  const part = (message, index) => {
    const shown = message.parts[index];
    if (!shown) return null;
    if (shown.type === 'text') return h('span', { key: index, className: 'text' }, shown.text);
    if (!isToolUIPart(shown)) return null;
    const output = shown.state === 'output-available' ? shown.output.text : undefined;
    return h(
      'div',
      { key: index, className: 'tool', 'data-type': shown.type, 'data-state': shown.state },
      h('code', { className: 'input' }, JSON.stringify(shown.input)),
      output === undefined ? null : h('pre', { className: 'output' }, output),
      shown.state === 'approval-requested'
        ? h(
            'button',
            {
              type: 'button',
              className: 'approve',
              onClick: () => addToolApprovalResponse({ id: shown.approval.id, approved: true }),
            },
            'Approve',
          )
        : null,
    );
  };
  return h(
    'main',
    null,
    h(
      'ol',
      { id: 'messages' },
      messages.map((message) =>
        h(
          'li',
          { key: message.id, 'data-role': message.role },
          message.parts.map((_, index) => part(message, index)),
        ),
      ),
    ),
    h(
      'form',
      {
        onSubmit: (event) => {
          event.preventDefault();
          void sendMessage({ text: input });
          setInput('');
        },
      },
      h('input', { id: 'input', value: input, onChange: (event) => setInput(event.target.value) }),
      h('button', { type: 'submit', id: 'send' }, 'Send'),
    ),
    h('p', { id: 'status' }, status),
    error ? h('p', { id: 'error' }, error.message) : null,
  );
}

createRoot(document.getElementById('root')).render(h(App));
