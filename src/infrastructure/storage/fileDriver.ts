import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rmdir, stat, unlink, writeFile } from 'node:fs/promises';
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
import type { LiveStore } from './liveStore.ts';
import { payloadStoreWriteError } from './storeErrors.ts';
import {
  GROUPS_ROOT,
  groupName,
  isPayloadGroupPath,
  type PayloadGroup,
  pathOfGroup,
  payloadGroupPath,
  type SweepableStore,
} from './sweep.ts';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

/** The claim entry naming a stored payload's file. */
const KEY_CLAIM = 'sha256';
/** The claim entry naming the folder of the workflow it was stored for; claims made before it have none. */
const GROUP_CLAIM = 'group';
const KEY_PATTERN = /^[0-9a-f]{64}$/;

/**
 * An External Storage driver that keeps each payload as a file named by the SHA-256 of its bytes,
 * under one directory: the embedded default. Several machines share it on a common volume (NFS, a
 * mounted disk); a cluster without one uses the S3 driver instead (see docs/storage.md). The bytes are what
 * the codec chain produced, so with the AES-GCM codec the files hold only ciphertext.
 *
 * Files are grouped by the namespace and workflow whose history refers to them
 * (`workflows/<namespace>/<workflow id>/<sha256>`, the SDK's store target), so {@link sweepPayloads}
 * can delete what belongs to workflows Temporal no longer has. A file is written once (a retried
 * store of the same bytes finds it). Claims made before grouping name a file in `<xx>/<sha256>`;
 * they are read as before and never swept.
 */
export class FileStorageDriver implements StorageDriver, SweepableStore {
  /** The driver's name in each stored payload's claim, which selects it on reading. Default `'yiem-files'`. */
  readonly name: string;
  /** The kind of store, as Temporal's external storage names drivers. */
  readonly type = 'yiem.filesystem';
  /** The folder the payloads are in, made absolute. */
  readonly directory: string;

  constructor(directory: string, name = 'yiem-files') {
    this.directory = path.resolve(directory);
    this.name = name;
  }

  get location(): string {
    return this.directory;
  }

  /** Stores payloads and returns the claims that history keeps in their place. */
  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const group = payloadGroupPath(context.target);
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = PayloadProto.encode(payload).finish();
        const key = createHash('sha256').update(bytes).digest('hex');
        await this.#writeOnce(path.join(this.directory, group, key), bytes).catch((error: unknown) => {
          throw payloadStoreWriteError(`file payload store ${this.directory}`, error);
        });
        return new StorageDriverClaim({ [KEY_CLAIM]: key, [GROUP_CLAIM]: group });
      }),
    );
  }

  /** Reads the payloads of claims made by `store`. */
  async retrieve(_context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    return Promise.all(
      claims.map(async (claim) => {
        const key = claim.claimData[KEY_CLAIM] ?? '';
        if (!KEY_PATTERN.test(key)) throw new Error(`Payload store: "${key}" is not a payload key`);
        const group = claim.claimData[GROUP_CLAIM];
        if (group !== undefined && !isPayloadGroupPath(group)) {
          throw new Error(`Payload store: "${group}" is not a payload group`);
        }
        const file =
          group === undefined
            ? path.join(this.directory, key.slice(0, 2), key)
            : path.join(this.directory, group, key);
        let bytes: Buffer;
        try {
          bytes = await readFile(file);
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

  async listGroups(): Promise<PayloadGroup[]> {
    const groups: PayloadGroup[] = [];
    const root = path.join(this.directory, GROUPS_ROOT);
    for (const namespace of await folders(root)) {
      for (const workflow of await folders(path.join(root, namespace))) {
        groups.push({ namespace: groupName(namespace), workflowId: groupName(workflow) });
      }
    }
    return groups;
  }

  async deleteGroup(group: PayloadGroup, writtenBefore?: Date): Promise<number> {
    const folder = path.join(this.directory, pathOfGroup(group));
    let deleted = 0;
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (!KEY_PATTERN.test(name)) continue;
      const file = path.join(folder, name);
      if (writtenBefore && (await stat(file)).mtime >= writtenBefore) continue;
      await unlink(file);
      deleted++;
    }
    // Gone once empty, so the next sweep does not list it; a store meanwhile makes it again.
    await rmdir(folder).catch(() => undefined);
    return deleted;
  }

  /** The live channels' files (`LiveChannel`), in `live/` beside the payloads: a listing is a local read. */
  liveStore(): LiveStore {
    const root = path.join(this.directory, 'live');
    const at = (folder: string, name = ''): string => path.join(root, ...folder.split('/'), name);
    // Half-written files (renamed whole when done) are not there yet.
    const names = async (folder: string): Promise<string[]> =>
      (await readdir(at(folder)).catch(() => [] as string[])).filter((name) => !name.endsWith('.tmp'));
    return {
      readIntervalMs: 50,
      idleReadIntervalMs: 50,
      followersListingMs: 0,
      names: async (folder, after) =>
        (await names(folder)).filter((name) => after === undefined || name > after),
      async written(folder) {
        const written = new Map<string, number>();
        for (const name of await names(folder)) {
          const file = await stat(at(folder, name)).catch(() => undefined);
          if (file?.isFile()) written.set(name, file.mtimeMs);
        }
        return written;
      },
      async write(folder, name, bytes) {
        await mkdir(at(folder), { recursive: true });
        const temporary = at(folder, `${name}.${randomUUID()}.tmp`);
        await writeFile(temporary, bytes);
        await rename(temporary, at(folder, name));
      },
      read: (folder, name) => readFile(at(folder, name)).catch(() => undefined),
      remove: (folder, name) => unlink(at(folder, name)).catch(() => undefined),
    };
  }

  /** Writes through a temporary file and a rename, so a reader never sees half a payload. */
  async #writeOnce(file: string, bytes: Uint8Array): Promise<void> {
    if (await exists(file)) return;
    await mkdir(path.dirname(file), { recursive: true });
    const temporary = `${file}.${randomUUID()}.tmp`;
    await writeFile(temporary, bytes);
    await rename(temporary, file);
  }
}

async function folders(directory: string): Promise<string[]> {
  const entries = await readdir(directory, { withFileTypes: true }).catch(() => []);
  return entries.filter((entry) => entry.isDirectory()).map((entry) => entry.name);
}

async function exists(file: string): Promise<boolean> {
  try {
    await stat(file);
    return true;
  } catch {
    return false;
  }
}
