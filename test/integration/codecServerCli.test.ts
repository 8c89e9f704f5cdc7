import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../src/infrastructure/codec/index.ts';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

const key = { id: 'k1', key: randomBytes(32) };

function runCodecServer(env: Record<string, string>) {
  const {
    YIEM_CODEC_KEYS: _keys,
    YIEM_CODEC_KEY_FILE: _file,
    YIEM_CODEC_SERVER_TOKEN: _token,
    ...base
  } = process.env;
  return spawn(process.execPath, [...YIEM_FROM_SOURCES, 'codec-server', '--port', '0'], {
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('yiem codec-server', () => {
  it('refuses to start without keys or without a token, saying which is missing', async () => {
    for (const [env, missing] of [
      [{ YIEM_CODEC_SERVER_TOKEN: 't' }, 'YIEM_CODEC_KEYS'],
      [{ YIEM_CODEC_KEYS: `k1:${key.key.toString('base64')}` }, 'YIEM_CODEC_SERVER_TOKEN'],
    ] as const) {
      const child = runCodecServer(env);
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const [code] = await once(child, 'exit');
      expect(code).toBe(1);
      expect(stderr).toContain(missing);
    }
  });

  it('decodes payloads encrypted with the keys from the environment', async () => {
    const child = runCodecServer({
      YIEM_CODEC_KEYS: `k1:${key.key.toString('base64')}`,
      YIEM_CODEC_SERVER_TOKEN: 'cli-token',
    });
    try {
      const lines = createInterface({ input: child.stdout });
      const [line] = (await once(lines, 'line')) as [string];
      const url = line.match(/http:\/\/\S+/)?.[0];
      const [encrypted] = await new AesGcmPayloadCodec([key]).encode([
        defaultPayloadConverter.toPayload('hello from the worker'),
      ]);
      const response = await fetch(`${url}/decode`, {
        method: 'POST',
        headers: { Authorization: 'Bearer cli-token', 'Content-Type': 'application/json' },
        body: JSON.stringify({
          payloads: [
            {
              metadata: Object.fromEntries(
                Object.entries(encrypted?.metadata ?? {}).map(([k, v]) => [
                  k,
                  Buffer.from(v).toString('base64'),
                ]),
              ),
              data: Buffer.from(encrypted?.data ?? []).toString('base64'),
            },
          ],
        }),
      });
      expect(response.status).toBe(200);
      const { payloads } = (await response.json()) as { payloads: { data: string }[] };
      expect(Buffer.from(payloads[0]?.data ?? '', 'base64').toString()).toBe('"hello from the worker"');
    } finally {
      const exited = once(child, 'exit');
      child.kill('SIGTERM');
      await exited;
    }
  });
});
