import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import {
  type Payload,
  type StorageDriver,
  StorageDriverClaim,
  type StorageDriverRetrieveContext,
  type StorageDriverStoreContext,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import { describeThrown } from '../../contract/thrown.ts';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

/** The claim entry naming a stored payload's file. */
const KEY_CLAIM = 'sha256';
const KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * An External Storage driver that keeps each payload as a file named by the SHA-256 of its bytes,
 * under one directory: the embedded default. Several machines share it on a common volume (NFS, a
 * mounted disk); a cluster without one uses Temporal's S3 driver instead (see README). The bytes are
 * what the codec chain produced, so with the AES-GCM codec the files hold only ciphertext.
 *
 * Files are written once (a retried store of the same bytes finds its file) and never deleted: a
 * history or a transcript may refer to them for as long as the conversation is kept.
 */
export class FileStorageDriver implements StorageDriver {
  readonly name: string;
  readonly type = 'yiem.filesystem';
  readonly directory: string;

  constructor(directory: string, name = 'yiem-files') {
    this.directory = path.resolve(directory);
    this.name = name;
  }

  async store(_context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    await mkdir(this.directory, { recursive: true });
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = PayloadProto.encode(payload).finish();
        const key = createHash('sha256').update(bytes).digest('hex');
        await this.#writeOnce(key, bytes);
        return new StorageDriverClaim({ [KEY_CLAIM]: key });
      }),
    );
  }

  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const key = claim.claimData[KEY_CLAIM] ?? '';
        if (!KEY_PATTERN.test(key)) throw new Error(`Payload store: "${key}" is not a payload key`);
        let bytes: Buffer;
        try {
          bytes = await readFile(this.#file(key));
        } catch (error) {
          throw new Error(
            `Payload store: payload ${key} is missing from ${this.directory} (${describeThrown(error)}). ` +
              'Workers and clients must share this directory (or use the same S3 bucket).',
          );
        }
        const { metadata, data } = PayloadProto.decode(bytes);
        return { metadata, data };
      }),
    );
  }

  #file(key: string): string {
    return path.join(this.directory, key.slice(0, 2), key);
  }

  /** Writes through a temporary file and a rename, so a reader never sees half a payload. */
  async #writeOnce(key: string, bytes: Uint8Array): Promise<void> {
    const file = this.#file(key);
    if (await exists(file)) return;
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, file);
  }
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
