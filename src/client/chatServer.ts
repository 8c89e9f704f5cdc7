import { createServer, type Server } from 'node:http';
import { namesLoopbackHost, requireTokenOffLoopback } from '../infrastructure/httpAccess.ts';
import { listen } from '../infrastructure/httpListen.ts';
import { type ChatEndpoint, type ChatEndpointOptions, createChatEndpoint } from './chatEndpoint.ts';

/** Options of {@link serveChatEndpoint}. */
export interface ServeChatEndpointOptions extends ChatEndpointOptions {
  /** The address to listen on. Default `127.0.0.1`; any but loopback needs `token`. */
  host?: string;
  /** Default 0: a free port (see `url`). */
  port?: number;
  /** Where the endpoint is: POST `path`, GET `path/<chat id>/stream`. Default `/api/chat`. */
  path?: string;
}

/** A chat endpoint listening on its own Node server. */
export interface RunningChatEndpoint {
  /** The endpoint's URL, e.g. `http://127.0.0.1:51234/api/chat`: `useChat`'s `api`. */
  url: string;
  /** The Node HTTP server it listens with, e.g. to read its address. */
  server: Server;
  /** The request handler it serves, to mount it on another server as well. */
  endpoint: ChatEndpoint;
  /** Stops listening. */
  close(): Promise<void>;
}

/**
 * Serves a chat endpoint on its own HTTP server, on loopback unless told otherwise. Listening on any
 * other address is refused without a `token`, which every request must then carry. Without a token,
 * requests must name a loopback host in `Host`, so that a web page whose name points at 127.0.0.1
 * (DNS rebinding) cannot reach it either.
 */
export async function serveChatEndpoint(options: ServeChatEndpointOptions): Promise<RunningChatEndpoint> {
  const { host = '127.0.0.1', port = 0, path = '/api/chat', ...endpointOptions } = options;
  requireTokenOffLoopback('chat endpoint', host, options.token);
  const endpoint = createChatEndpoint(endpointOptions);
  const base = path.replace(/\/+$/, '');
  const server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    if (!options.token && !namesLoopbackHost(request.headers.host)) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' });
      response.end('This chat endpoint answers requests to localhost only');
      return;
    }
    if (url.pathname !== base && !url.pathname.startsWith(`${base}/`)) {
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`Not found: the chat endpoint is ${base}`);
      return;
    }
    endpoint.node(request, response);
  });
  const { origin, close } = await listen(server, port, host);
  return { url: `${origin}${base}`, server, endpoint, close };
}
