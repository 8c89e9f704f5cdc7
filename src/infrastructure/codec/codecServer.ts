import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { ExternalStorage, Payload, PayloadCodec } from '@temporalio/common';
import { ExternalStorageRunner } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { MAX_CODEC_REQUEST_BYTES } from '../../contract/limits.ts';
import { TokenCheck } from '../httpAccess.ts';
import { listen } from '../httpListen.ts';

/** What `startCodecServer` serves, and to whom. */
export interface CodecServerOptions {
  /** The codec the workers use (the same keys), whose `decode` the Web UI asks for. */
  codec: PayloadCodec;
  /**
   * The workers' payload store: `/decode` replaces its references by the stored payloads before
   * decrypting them, so the Web UI shows large inputs and results too.
   */
  externalStorage?: ExternalStorage;
  /**
   * Requests must carry `Authorization: Bearer <token>` or start their path with `/<token>/`.
   * Required: decoded histories are private.
   */
  token: string;
  /** Origins allowed by CORS, e.g. the Web UI's `http://localhost:8080`. */
  allowedOrigins: string[];
  /** Default `127.0.0.1`. */
  host?: string;
  /** Default 8888; 0 picks a free port. */
  port?: number;
}

/** A codec server started by `startCodecServer`. */
export interface RunningCodecServer {
  /** `http://host:port`: the endpoint for `temporal --codec-endpoint`; the Web UI takes `<url>/<token>`. */
  url: string;
  /** Stops listening. */
  close(): Promise<void>;
}

/** Payloads as the codec server protocol sends them: proto3 JSON, bytes as base64. */
interface JsonPayloads {
  payloads: { metadata?: Record<string, string>; data?: string }[];
}

/**
 * Temporal's remote codec protocol: `POST /encode` and `POST /decode` with `{ payloads: [...] }`, so
 * the Web UI and the `temporal` CLI can show encrypted histories to whoever holds the token.
 */
export async function startCodecServer(options: CodecServerOptions): Promise<RunningCodecServer> {
  if (!options.token) throw new Error('The codec server needs an auth token');
  const tokenCheck = new TokenCheck(options.token);
  const server = createServer((request, response) => {
    handle(options, tokenCheck, request, response).catch((error: Error) => {
      send(response, 400, { message: error.message });
    });
  });
  const { origin, close } = await listen(server, options.port ?? 8888, options.host ?? '127.0.0.1');
  return { url: origin, close };
}

async function handle(
  options: CodecServerOptions,
  tokenCheck: TokenCheck,
  request: IncomingMessage,
  response: ServerResponse,
) {
  const origin = request.headers.origin;
  if (origin && options.allowedOrigins.includes(origin)) {
    response.setHeader('Access-Control-Allow-Origin', origin);
    response.setHeader('Access-Control-Allow-Credentials', 'true');
    response.setHeader('Access-Control-Allow-Methods', 'POST, OPTIONS');
    response.setHeader('Access-Control-Allow-Headers', 'Authorization, Content-Type, X-Namespace');
    response.setHeader('Vary', 'Origin');
  }
  if (request.method === 'OPTIONS') return send(response, 204);
  const route = request.url?.split('?')[0]?.match(/^\/(?:([^/]+)\/)?(encode|decode)$/);
  const operation = route?.[2];
  if (request.method !== 'POST' || !operation) return send(response, 404, { message: 'Not found' });
  if (!authorized(tokenCheck, request.headers.authorization, route?.[1])) {
    return send(response, 401, { message: 'Missing or wrong Authorization: Bearer token' });
  }
  const body = parsePayloads(await readBody(request));
  const payloads = body.payloads.map(fromJson);
  const result =
    operation === 'encode'
      ? await options.codec.encode(payloads)
      : await options.codec.decode(await retrieveStored(options.externalStorage, payloads));
  send(response, 200, { payloads: result.map(toJson) });
}

function retrieveStored(storage: ExternalStorage | undefined, payloads: Payload[]): Promise<Payload[]> {
  return storage ? new ExternalStorageRunner(storage).retrieve(payloads) : Promise.resolve(payloads);
}

/**
 * The token comes as `Authorization: Bearer <token>` (the `temporal` CLI's `--codec-auth`) or as the
 * first path segment, `/<token>/decode`: the Web UI sends no custom headers, only the endpoint URL.
 */
function authorized(
  tokenCheck: TokenCheck,
  header: string | undefined,
  pathToken: string | undefined,
): boolean {
  if (pathToken !== undefined) return tokenCheck.matches(decodeURIComponent(pathToken));
  return tokenCheck.matchesBearer(header);
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request) {
    size += (chunk as Buffer).length;
    if (size > MAX_CODEC_REQUEST_BYTES) throw new Error(`Request body over ${MAX_CODEC_REQUEST_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function parsePayloads(text: string): JsonPayloads {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error('Body is not JSON');
  }
  if (!Array.isArray((body as JsonPayloads | null)?.payloads)) {
    throw new Error('Body must be {"payloads": [...]}');
  }
  return body as JsonPayloads;
}

function fromJson(payload: JsonPayloads['payloads'][number]): Payload {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value, 'base64')]),
    ),
    data: Buffer.from(payload.data ?? '', 'base64'),
  };
}

function toJson(payload: Payload): JsonPayloads['payloads'][number] {
  return {
    metadata: Object.fromEntries(
      Object.entries(payload.metadata ?? {}).map(([key, value]) => [
        key,
        Buffer.from(value ?? new Uint8Array()).toString('base64'),
      ]),
    ),
    data: Buffer.from(payload.data ?? new Uint8Array()).toString('base64'),
  };
}

function send(response: ServerResponse, status: number, body?: unknown): void {
  if (response.headersSent) return;
  response.writeHead(status, body === undefined ? {} : { 'Content-Type': 'application/json' });
  response.end(body === undefined ? undefined : JSON.stringify(body));
}
