import { codecFromEnv } from '../infrastructure/codec/dataConverter.ts';
import { startCodecServer } from '../infrastructure/codec/index.ts';
import { payloadStorageFromEnv, payloadStoreOf } from '../infrastructure/storage/payloadStorage.ts';
import { describeStore } from '../infrastructure/storage/payloadStoreIdentity.ts';
import { cliEnvironment } from './environment.ts';

export interface CodecServerFlags {
  host: string;
  port: string;
  origin: string[];
}

/** `yiem codec-server`: decrypts payloads for the Web UI and the `temporal` CLI, until Ctrl-C. */
export async function codecServerCommand(flags: CodecServerFlags): Promise<void> {
  const env = cliEnvironment();
  // A reader: histories may hold unencrypted payloads (an intruder's refused prompt), and showing them is harmless.
  const codec = codecFromEnv(env, { allowUnencrypted: true });
  if (!codec) throw new Error('Set YIEM_CODEC_KEYS or YIEM_CODEC_KEY_FILE: the codec server needs the keys');
  const token = env.YIEM_CODEC_SERVER_TOKEN;
  if (!token)
    throw new Error('Set YIEM_CODEC_SERVER_TOKEN: the codec server only answers requests that carry it');
  const externalStorage = payloadStorageFromEnv(env);
  const server = await startCodecServer({
    codec,
    ...(externalStorage ? { externalStorage } : {}),
    token,
    allowedOrigins: flags.origin,
    host: flags.host,
    port: Number(flags.port),
  });
  console.log(`Codec server at ${server.url} (CORS for ${flags.origin.join(', ')}). Press Ctrl-C to stop.`);
  const store = await payloadStoreOf(externalStorage);
  console.log(`Payload store: ${store ? describeStore(store) : 'none (payloads inline)'}`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
  await server.close();
}
