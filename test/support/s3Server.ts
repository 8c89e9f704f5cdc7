import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { getFreePort } from '../../src/infrastructure/server/index.ts';

const INSTALL = fileURLToPath(new URL('../../deploy/s3/install.sh', import.meta.url));

/** A real S3-compatible server (gofakes3, see deploy/s3/install.sh) on a free loopback port. */
export interface S3Server {
  endpoint: string;
  bucket: string;
  /** The environment a worker, client or CLI needs to keep payloads in this server's bucket. */
  env: Record<string, string>;
  /** Stops the server (its objects stay): a store outage, connections refused. */
  stop(): Promise<void>;
  /** Starts it again on the same port with the same objects. */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startS3Server(bucket = 'yiem-payloads'): Promise<S3Server> {
  const { stdout } = await promisify(execFile)('bash', [INSTALL], { timeout: 600_000 });
  const bin = /^YIEM_S3_SERVER_BIN=(.+)$/m.exec(stdout)?.[1];
  if (!bin) throw new Error(`deploy/s3/install.sh printed no YIEM_S3_SERVER_BIN: ${stdout}`);
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-s3-'));
  const port = await getFreePort();
  let child = await listen(bin, dataDir, port, bucket);
  const endpoint = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  return {
    endpoint,
    bucket,
    env: {
      YIEM_PAYLOAD_STORAGE: 's3',
      YIEM_S3_BUCKET: bucket,
      YIEM_S3_ENDPOINT: endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'yiem-test',
      AWS_SECRET_ACCESS_KEY: 'yiem-test-secret',
    },
    stop,
    async start() {
      await stop();
      child = await listen(bin, dataDir, port, bucket);
    },
    async close() {
      await stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

/** The server on `port`, keeping its objects in `dataDir`; resolves once it listens. */
async function listen(bin: string, dataDir: string, port: number, bucket: string): Promise<ChildProcess> {
  const child = spawn(
    bin,
    [
      '-backend',
      'fs',
      '-fs.path',
      dataDir,
      '-fs.create',
      '-host',
      `127.0.0.1:${port}`,
      '-initialbucket',
      bucket,
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr = (stderr + chunk).slice(-4_000);
  });
  await waitForPort(
    port,
    () => child.exitCode !== null,
    () => stderr,
  );
  return child;
}

async function waitForPort(port: number, exited: () => boolean, log: () => string): Promise<void> {
  for (let attempt = 0; attempt < 200; attempt++) {
    if (exited()) throw new Error(`the S3 server exited: ${log()}`);
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
  throw new Error(`the S3 server did not listen on 127.0.0.1:${port}: ${log()}`);
}
