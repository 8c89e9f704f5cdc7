import { StrictMode, useEffect, useState } from 'react';
import { createRoot } from 'react-dom/client';
import type { ConsoleInfo } from '../client/consoleApi.ts';
import { api } from './api.ts';
import { ConversationList } from './ConversationList.tsx';
import { ConversationView } from './ConversationView.tsx';
import './console.css';

/** `#/conversations/<id>` opens a conversation; anything else shows the list alone. */
function routedConversation(): string | null {
  const match = /^#\/conversations\/(.+)$/.exec(window.location.hash);
  return match ? decodeURIComponent(match[1] as string) : null;
}

function App() {
  const [open, setOpen] = useState(routedConversation);
  const [info, setInfo] = useState<ConsoleInfo | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const follow = (): void => setOpen(routedConversation());
    window.addEventListener('hashchange', follow);
    return () => window.removeEventListener('hashchange', follow);
  }, []);
  useEffect(() => {
    api.info().then(setInfo, (failure: Error) => setError(failure.message));
  }, []);
  if (error) {
    return (
      <p className="error" id="console-error">
        {error}
      </p>
    );
  }
  if (!info) return <p className="muted">Connecting…</p>;
  return (
    <div className={open ? 'layout with-conversation' : 'layout'}>
      <header className="top">
        <a href="#/" className="brand">
          yiem console
        </a>
        <span className="muted">namespace {info.namespace}</span>
        {info.webUiUrl ? (
          <a className="webui" href={info.webUiUrl} target="_blank" rel="noreferrer">
            Temporal Web UI ↗
          </a>
        ) : null}
      </header>
      <ConversationList info={info} selected={open} />
      {open ? <ConversationView key={open} id={open} info={info} /> : null}
    </div>
  );
}

createRoot(document.getElementById('root') as HTMLElement).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
