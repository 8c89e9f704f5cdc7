import { execFile, spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getFreePort } from '../../src/infrastructure/server/index.ts';

const INSTALL = fileURLToPath(new URL('../../deploy/otel/install.sh', import.meta.url));

/** A span as the Collector wrote it (OTLP JSON), its attributes decoded to plain values. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  /** OTLP's numbers: 1 internal, 2 server, 3 client, ... */
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes: Record<string, unknown>;
  /** 0 unset, 1 ok, 2 error. */
  status: { code: number; message: string };
  resource: Record<string, unknown>;
}

/** A real OpenTelemetry Collector (deploy/otel/install.sh): OTLP/HTTP in, every span to a file. */
export interface OtelCollector {
  /** Where an OTLP/HTTP trace exporter sends, e.g. `http://127.0.0.1:4318/v1/traces`. */
  tracesUrl: string;
  /** The file the Collector's file exporter writes (one OTLP JSON export request a line). */
  spansFile: string;
  /** Every span the Collector has written so far. */
  spans(): Promise<ReceivedSpan[]>;
  close(): Promise<void>;
}

/** Starts the Collector; its spans go to `spansFile` (default: a new temporary folder). */
export async function startOtelCollector(spansFile?: string): Promise<OtelCollector> {
  const { stdout } = await promisify(execFile)('bash', [INSTALL], { timeout: 900_000 });
  const bin = /^YIEM_OTELCOL_BIN=(.+)$/m.exec(stdout)?.[1];
  if (!bin) throw new Error(`deploy/otel/install.sh printed no YIEM_OTELCOL_BIN: ${stdout}`);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-otelcol-'));
  const file = spansFile ?? path.join(dir, 'spans.jsonl');
  const port = await getFreePort();
  const config = path.join(dir, 'collector.yaml');
  await writeFile(
    config,
    [
      'receivers:',
      '  otlp:',
      '    protocols:',
      '      http:',
      `        endpoint: 127.0.0.1:${port}`,
      'exporters:',
      '  file:',
      `    path: ${JSON.stringify(file)}`,
      'service:',
      '  telemetry:',
      '    metrics:',
      '      level: none',
      '  pipelines:',
      '    traces:',
      '      receivers: [otlp]',
      '      exporters: [file]',
      '',
    ].join('\n'),
  );
  const child = spawn(bin, ['--config', config], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-8_000);
  });
  await waitForPort(
    port,
    () => child.exitCode !== null,
    () => stderr,
  );
  return {
    tracesUrl: `http://127.0.0.1:${port}/v1/traces`,
    spansFile: file,
    async spans() {
      const text = await readFile(file, 'utf8').catch(() => '');
      return text
        .split('\n')
        .filter((line) => line.trim() !== '')
        .flatMap((line) => receivedSpans(JSON.parse(line)));
    },
    async close() {
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        await exited;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
interface OtlpKeyValue {
  key: string;
  value: OtlpValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: OtlpKeyValue[];
  status?: { code?: number; message?: string };
}
interface OtlpExport {
  resourceSpans: { resource?: { attributes?: OtlpKeyValue[] }; scopeSpans: { spans?: OtlpSpan[] }[] }[];
}

function receivedSpans(request: OtlpExport): ReceivedSpan[] {
  return request.resourceSpans.flatMap(({ resource, scopeSpans }) =>
    scopeSpans.flatMap(({ spans = [] }) =>
      spans.map((span) => ({
        traceId: span.traceId,
        spanId: span.spanId,
        parentSpanId: span.parentSpanId ?? '',
        name: span.name,
        kind: span.kind ?? 0,
        startTimeUnixNano: span.startTimeUnixNano,
        endTimeUnixNano: span.endTimeUnixNano,
        attributes: decodeAttributes(span.attributes),
        status: { code: span.status?.code ?? 0, message: span.status?.message ?? '' },
        resource: decodeAttributes(resource?.attributes),
      })),
    ),
  );
}

function decodeAttributes(attributes: OtlpKeyValue[] = []): Record<string, unknown> {
  return Object.fromEntries(attributes.map(({ key, value }) => [key, decodeValue(value)]));
}

function decodeValue(value: OtlpValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(decodeValue);
  return undefined;
}

async function waitForPort(port: number, exited: () => boolean, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (exited()) throw new Error(`the Collector exited: ${log()}`);
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1');
      socket.once('connect', () => {
        socket.end();
        resolve(true);
      });
      socket.once('error', () => resolve(false));
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`the Collector did not listen on 127.0.0.1:${port}: ${log()}`);
}
