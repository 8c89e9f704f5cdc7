/**
 * A scripted model in a process of its own, for tests whose measurements the model's own work would
 * skew (streaming megabytes in tiny deltas holds its process for seconds). Prints its base URL.
 * `CHUNK_SIZE`: characters per delta. It answers `flood <n>` with n characters of text, anything
 * else `ping <x>` with `pong <x>`.
 */
import { startScriptedModel } from '../../src/testing/index.ts';

const chunkSize = Number(process.env.CHUNK_SIZE) || undefined;
const model = await startScriptedModel({
  ...(chunkSize ? { chunkSize } : {}),
  respond: (request) => {
    const last = String(request.body.messages.at(-1)?.content ?? '');
    const flood = /^flood (\d+)$/.exec(last);
    if (flood) return { kind: 'text', text: 'f'.repeat(Number(flood[1])) };
    return { kind: 'text', text: `pong ${last.replace('ping ', '')}` };
  },
});
process.stdout.write(`${model.baseURL}\n`);
process.once('SIGTERM', () => {
  void model.close().then(() => process.exit(0));
});
