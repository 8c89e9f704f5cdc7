import { readFile, realpath } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MAX_SANDBOX_READ_BYTES } from '../../src/contract/limits.ts';
import type { SandboxSettings } from './settings.ts';

/** What a sandboxed `fetch` returns across the isolate boundary: plain data. */
export interface BridgedResponse {
  ok: boolean;
  status: number;
  statusText: string;
  headers: Record<string, string>;
  body: string;
}

/** The sandbox's only way to the file system: UTF-8 reads of allowlisted paths. */
export async function readAllowedFile(settings: SandboxSettings, path: unknown): Promise<string> {
  if (typeof path !== 'string') throw new Error(`readFile takes a path string, not ${typeName(path)}`);
  const refused = `Reading "${path}" is not allowed: written tools may read only ${describeAllowlist(settings)}`;
  let real: string;
  try {
    real = await realpath(resolve(path));
  } catch {
    // A missing file outside the allowlist must not be distinguishable from a present one.
    if (!isAllowed(settings, resolve(path))) throw new Error(refused);
    throw new Error(`File "${path}" does not exist`);
  }
  if (!isAllowed(settings, real)) throw new Error(refused);
  const content = await readFile(real);
  if (content.byteLength > MAX_SANDBOX_READ_BYTES) {
    throw new Error(`File "${path}" is larger than the sandbox's ${MAX_SANDBOX_READ_BYTES} byte limit`);
  }
  return content.toString('utf8');
}

/** The sandbox's only way to the network, when the worker allows it at all. */
export async function fetchIfAllowed(
  settings: SandboxSettings,
  url: unknown,
  initJson: unknown,
  signal: AbortSignal,
): Promise<BridgedResponse> {
  if (typeof url !== 'string') throw new Error(`fetch takes a URL string, not ${typeName(url)}`);
  const init = parseInit(initJson);
  if (!settings.allowNetwork) {
    throw new Error(
      `Network access is not allowed: this worker runs written tools without network (fetch of ${url} refused)`,
    );
  }
  const response = await fetch(url, {
    signal,
    ...(init.method ? { method: init.method } : {}),
    ...(init.headers ? { headers: init.headers } : {}),
    ...(init.body !== undefined ? { body: init.body } : {}),
  });
  const body = await response.text();
  return {
    ok: response.ok,
    status: response.status,
    statusText: response.statusText,
    headers: Object.fromEntries(response.headers.entries()),
    body: body.length > MAX_SANDBOX_READ_BYTES ? body.slice(0, MAX_SANDBOX_READ_BYTES) : body,
  };
}

/** fetch's init as the prelude sends it: JSON of `{ method?, headers?, body? }`, all strings. */
function parseInit(initJson: unknown): { method?: string; headers?: Record<string, string>; body?: string } {
  let init: unknown;
  try {
    init = JSON.parse(String(initJson));
  } catch {
    throw new Error('fetch init must be an object like { method, headers, body }');
  }
  if (typeof init !== 'object' || init === null || Array.isArray(init)) {
    throw new Error('fetch init must be an object like { method, headers, body }');
  }
  const { method, headers, body } = init as Record<string, unknown>;
  if (method !== undefined && typeof method !== 'string')
    throw new Error('fetch init.method must be a string');
  if (body !== undefined && typeof body !== 'string') throw new Error('fetch init.body must be a string');
  if (
    headers !== undefined &&
    (typeof headers !== 'object' ||
      headers === null ||
      Object.values(headers).some((value) => typeof value !== 'string'))
  ) {
    throw new Error('fetch init.headers must be an object of strings');
  }
  return {
    ...(method === undefined ? {} : { method }),
    ...(headers === undefined ? {} : { headers: headers as Record<string, string> }),
    ...(body === undefined ? {} : { body }),
  };
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' || typeof value === 'undefined'
    ? `an ${typeof value}`
    : `a ${typeof value}`;
}

function isAllowed(settings: SandboxSettings, path: string): boolean {
  return settings.fsAllowlist.some((allowed) => {
    const rest = relative(allowed, path);
    return rest === '' || (rest.split(sep)[0] !== '..' && !isAbsolute(rest));
  });
}

function describeAllowlist(settings: SandboxSettings): string {
  return settings.fsAllowlist.length === 0
    ? 'no files on this worker'
    : `these paths: ${settings.fsAllowlist.join(', ')}`;
}
