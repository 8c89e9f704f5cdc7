import { createHash, randomBytes } from 'node:crypto';
import type { ListObjectsV2CommandOutput, S3Client, S3ClientConfig } from '@aws-sdk/client-s3';
import {
  type Payload,
  type StorageDriver,
  StorageDriverClaim,
  type StorageDriverRetrieveContext,
  type StorageDriverStoreContext,
} from '@temporalio/common';
import proto from '@temporalio/proto';
import { describeThrown } from '../../contract/thrown.ts';
import { defaultProcessVariable } from '../environment.ts';
import { requireOptional } from '../optionalDependency.ts';
import type { LiveStore } from './liveStore.ts';
import { type PayloadStoreIdentity, STORE_ID_PATTERN } from './payloadStoreIdentity.ts';
import { payloadStoreWriteError } from './storeErrors.ts';
import {
  GROUPS_ROOT,
  groupName,
  type PayloadGroup,
  pathOfGroup,
  payloadGroupPath,
  type SweepableStore,
} from './sweep.ts';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

type S3Module = typeof import('@aws-sdk/client-s3');

/** The object holding the store's id, beside the payloads (the file store's `store-id` file). */
const ID_OBJECT = 'store-id';

/** Options of {@link S3StorageDriver}. */
export interface S3StorageDriverOptions {
  /** The bucket that holds the payloads. */
  bucket: string;
  /** Prepended to every key, e.g. `yiem/`; default none. */
  prefix?: string;
  /** The S3 client's settings (endpoint, region, credentials, forcePathStyle); default the AWS SDK's own. */
  client?: S3ClientConfig;
  /**
   * Whether followers read conversations' events from the bucket (`live/` after the prefix) instead of
   * polling the conversation; default true. Each follower then lists the bucket every 100 ms while
   * events come and every second while none do, and each running call once a second: requests
   * AWS bills, where a poll would be a Temporal Action (docs/streaming.md, "The live channel").
   */
  liveChannel?: boolean;
}

/**
 * An External Storage driver keeping each payload as an object in an S3-compatible bucket. The bytes
 * are what the codec chain produced, so with the AES-GCM codec the bucket holds only ciphertext.
 * Keys are grouped by the namespace and workflow whose history refers to them (the SDK's store
 * target), so {@link sweepPayloads} can delete what belongs to workflows Temporal no longer has.
 * `@aws-sdk/client-s3` is loaded on first use: a process without S3 never loads it.
 */
export class S3StorageDriver implements StorageDriver, SweepableStore {
  /** The driver's name in each stored payload's claim, which selects it on reading. Default `'yiem-s3'`. */
  readonly name: string;
  /** The kind of store, as Temporal's external storage names drivers. */
  readonly type = 'yiem.s3';
  /** The bucket the payloads are in. */
  readonly bucket: string;
  /** Put before every key, so that one bucket can hold several stores. Default `''`. */
  readonly prefix: string;
  readonly #clientConfig: S3ClientConfig;
  readonly #liveChannel: boolean;
  #identity: Promise<PayloadStoreIdentity> | undefined;
  #client: { s3: S3Module; client: S3Client } | undefined;

  constructor(options: S3StorageDriverOptions, name = 'yiem-s3') {
    this.bucket = options.bucket;
    this.prefix = options.prefix ?? '';
    this.#clientConfig = options.client ?? {};
    this.#liveChannel = options.liveChannel ?? true;
    this.name = name;
  }

  /** Where this driver stores, for messages: `s3://bucket/prefix`, and the server unless it is AWS's. */
  get location(): string {
    const endpoint = this.#clientConfig.endpoint;
    return `s3://${this.bucket}/${this.prefix}${typeof endpoint === 'string' ? ` via ${endpoint}` : ''}`;
  }

  /**
   * Which store this is: the id in the bucket's `store-id` object under the prefix, written by the
   * first process that asks. Two processes starting at once may both write one; each then reads
   * back the one that won, so all agree from then on.
   */
  identity(): Promise<PayloadStoreIdentity> {
    this.#identity ??= this.#readOrWriteIdentity().catch((error: unknown) => {
      this.#identity = undefined;
      throw new Error(
        `Payload store ${this.location}: cannot read or write its id (${describeThrown(error)})`,
      );
    });
    return this.#identity;
  }

  async #readOrWriteIdentity(): Promise<PayloadStoreIdentity> {
    const { s3, client } = this.#s3();
    const Key = `${this.prefix}${ID_OBJECT}`;
    const read = async (): Promise<string | undefined> => {
      try {
        const object = await client.send(new s3.GetObjectCommand({ Bucket: this.bucket, Key }));
        const text = (await object.Body?.transformToString())?.trim() ?? '';
        return STORE_ID_PATTERN.test(text) ? text : undefined;
      } catch (error) {
        if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
        throw error;
      }
    };
    let id = await read();
    if (!id) {
      await client.send(
        new s3.PutObjectCommand({ Bucket: this.bucket, Key, Body: `${randomBytes(8).toString('hex')}\n` }),
      );
      id = await read();
    }
    if (!id) throw new Error(`s3://${this.bucket}/${Key} does not hold a store id`);
    return { id, location: this.location };
  }

  /** Stores payloads and returns the claims that history keeps in their place. */
  async store(context: StorageDriverStoreContext, payloads: Payload[]): Promise<StorageDriverClaim[]> {
    const { s3, client } = this.#s3();
    const group = `${this.prefix}${payloadGroupPath(context.target)}`;
    return Promise.all(
      payloads.map(async (payload) => {
        const bytes = PayloadProto.encode(payload).finish();
        const key = `${group}${createHash('sha256').update(bytes).digest('hex')}`;
        try {
          await client.send(new s3.PutObjectCommand({ Bucket: this.bucket, Key: key, Body: bytes }), {
            ...(context.abortSignal ? { abortSignal: context.abortSignal } : {}),
          });
        } catch (error) {
          throw payloadStoreWriteError(`S3 payload store ${this.location}`, error);
        }
        return new StorageDriverClaim({ bucket: this.bucket, key });
      }),
    );
  }

  /** Reads the payloads of claims made by `store`. */
  async retrieve(context: StorageDriverRetrieveContext, claims: StorageDriverClaim[]): Promise<Payload[]> {
    const { s3, client } = this.#s3();
    return Promise.all(
      claims.map(async (claim) => {
        const bucket = claim.claimData.bucket || this.bucket;
        const key = claim.claimData.key ?? '';
        if (!key) throw new Error('Payload store: an S3 claim without a key');
        let bytes: Uint8Array;
        try {
          const object = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: key }), {
            ...(context.abortSignal ? { abortSignal: context.abortSignal } : {}),
          });
          if (!object.Body) throw new Error('empty object');
          bytes = await object.Body.transformToByteArray();
        } catch (error) {
          throw new Error(
            `Payload store: payload s3://${bucket}/${key} is missing or unreadable (${describeThrown(error)}). ` +
              'Workers and clients must use the same bucket (YIEM_S3_BUCKET, YIEM_S3_ENDPOINT).',
          );
        }
        const { metadata, data } = PayloadProto.decode(bytes);
        return { metadata, data };
      }),
    );
  }

  /** Every workflow that has payloads in the bucket. */
  async listGroups(): Promise<PayloadGroup[]> {
    const groups: PayloadGroup[] = [];
    for (const namespacePrefix of await this.#listPrefixes(`${this.prefix}${GROUPS_ROOT}`)) {
      const namespace = groupName(lastSegment(namespacePrefix));
      for (const workflowPrefix of await this.#listPrefixes(namespacePrefix)) {
        groups.push({ namespace, workflowId: groupName(lastSegment(workflowPrefix)) });
      }
    }
    return groups;
  }

  /**
   * Deletes the payloads of `group` written before `writtenBefore` (default: all); returns how many
   * objects it deleted.
   */
  async deleteGroup(group: PayloadGroup, writtenBefore?: Date): Promise<number> {
    const { s3, client } = this.#s3();
    const prefix = `${this.prefix}${pathOfGroup(group)}`;
    let deleted = 0;
    let token: string | undefined;
    do {
      const page = await client.send(
        new s3.ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const { Key, LastModified } of page.Contents ?? []) {
        if (!Key || (writtenBefore && LastModified && LastModified >= writtenBefore)) continue;
        await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key }));
        deleted++;
      }
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return deleted;
  }

  /** The live channels' objects (`LiveChannel`), under `live/` after the prefix; undefined when turned off. */
  liveStore(): LiveStore | undefined {
    if (!this.#liveChannel) return undefined;
    const key = (folder: string, name: string): string => `${this.prefix}live/${folder}/${name}`;
    return {
      readIntervalMs: 100,
      idleReadIntervalMs: 1_000,
      followersListingMs: 1_000,
      names: async (folder, after) => (await this.#listLive(folder, after)).map(({ name }) => name),
      written: async (folder) =>
        new Map((await this.#listLive(folder)).map(({ name, writtenAt }) => [name, writtenAt])),
      write: async (folder, name, bytes) => {
        const { s3, client } = this.#s3();
        await client.send(
          new s3.PutObjectCommand({ Bucket: this.bucket, Key: key(folder, name), Body: bytes }),
        );
      },
      read: async (folder, name) => {
        const { s3, client } = this.#s3();
        try {
          const object = await client.send(
            new s3.GetObjectCommand({ Bucket: this.bucket, Key: key(folder, name) }),
          );
          return await object.Body?.transformToByteArray();
        } catch (error) {
          if ((error as { name?: string }).name === 'NoSuchKey') return undefined;
          throw error;
        }
      },
      remove: async (folder, name) => {
        const { s3, client } = this.#s3();
        await client.send(new s3.DeleteObjectCommand({ Bucket: this.bucket, Key: key(folder, name) }));
      },
    };
  }

  /** The objects directly under `live/<folder>/`, after `after` in key order. */
  async #listLive(folder: string, after?: string): Promise<{ name: string; writtenAt: number }[]> {
    const prefix = `${this.prefix}live/${folder}/`;
    const pages = await this.#listFolder(prefix, after === undefined ? undefined : `${prefix}${after}`).catch(
      (error: unknown) => {
        // Some S3-compatible servers (gofakes3's file backend) answer so for a prefix without objects:
        // a channel nobody wrote to yet. A bucket really missing fails the store's own calls loudly.
        if ((error as { name?: string }).name === 'NoSuchBucket') return [];
        throw error;
      },
    );
    return pages.flatMap((page) =>
      (page.Contents ?? []).flatMap(({ Key, LastModified }) =>
        Key ? [{ name: Key.slice(prefix.length), writtenAt: LastModified?.getTime() ?? 0 }] : [],
      ),
    );
  }

  async #listPrefixes(prefix: string): Promise<string[]> {
    const pages = await this.#listFolder(prefix);
    return pages.flatMap((page) =>
      (page.CommonPrefixes ?? []).flatMap(({ Prefix }) => (Prefix ? [Prefix] : [])),
    );
  }

  /** Every page of the listing of what is directly under `prefix` (keys after `startAfter`). */
  async #listFolder(prefix: string, startAfter?: string): Promise<ListObjectsV2CommandOutput[]> {
    const { s3, client } = this.#s3();
    const pages: ListObjectsV2CommandOutput[] = [];
    let token: string | undefined;
    do {
      const page = await client.send(
        new s3.ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: prefix,
          Delimiter: '/',
          ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
        }),
      );
      pages.push(page);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return pages;
  }

  #s3(): { s3: S3Module; client: S3Client } {
    if (!this.#client) {
      // The SDK warns on every Node 20 process that *later* SDK releases will need Node 22: noise on
      // every `yiem` command, about versions this one is not.
      defaultProcessVariable('AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED', 'true');
      const s3 = requireOptional<S3Module>(
        '@aws-sdk/client-s3',
        'The S3 payload store (YIEM_PAYLOAD_STORAGE=s3)',
      );
      this.#client = { s3, client: new s3.S3Client(this.#clientConfig) };
    }
    return this.#client;
  }
}

function lastSegment(prefix: string): string {
  const parts = prefix.split('/');
  return parts[parts.length - 2] ?? '';
}

/**
 * The S3 driver the environment configures: `YIEM_S3_BUCKET` (required), `YIEM_S3_PREFIX`,
 * `YIEM_S3_ENDPOINT` (an S3-compatible server; path-style addressing then, unless
 * `YIEM_S3_FORCE_PATH_STYLE=0`), `YIEM_S3_LIVE_CHANNEL=0` (followers poll the conversation instead
 * of listing the bucket). Region and credentials come the AWS way (`AWS_REGION`,
 * `AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, instance roles...).
 *
 * @throws when `YIEM_S3_BUCKET` is missing or `YIEM_S3_LIVE_CHANNEL` is neither 0 nor 1.
 */
export function s3DriverFromEnv(env: Record<string, string | undefined>): S3StorageDriver {
  const bucket = env.YIEM_S3_BUCKET;
  if (!bucket)
    throw new Error('YIEM_PAYLOAD_STORAGE=s3 needs YIEM_S3_BUCKET, the bucket to keep payloads in');
  const endpoint = env.YIEM_S3_ENDPOINT;
  const client: S3ClientConfig = {};
  const region = env.AWS_REGION || env.AWS_DEFAULT_REGION;
  if (region) client.region = region;
  // Given explicitly, so an environment other than the process's (a test's, a tool's) is honoured;
  // otherwise the SDK's chain (process environment, profiles, instance roles) finds them.
  if (env.AWS_ACCESS_KEY_ID && env.AWS_SECRET_ACCESS_KEY) {
    client.credentials = {
      accessKeyId: env.AWS_ACCESS_KEY_ID,
      secretAccessKey: env.AWS_SECRET_ACCESS_KEY,
      ...(env.AWS_SESSION_TOKEN ? { sessionToken: env.AWS_SESSION_TOKEN } : {}),
    };
  }
  if (endpoint) {
    client.endpoint = endpoint;
    client.forcePathStyle = env.YIEM_S3_FORCE_PATH_STYLE !== '0';
    // S3-compatible servers ignore the region but the SDK insists on one; they may not speak the
    // SDK's default aws-chunked checksums either.
    client.region ??= 'us-east-1';
    client.requestChecksumCalculation = 'WHEN_REQUIRED';
    client.responseChecksumValidation = 'WHEN_REQUIRED';
  }
  const liveChannel = env.YIEM_S3_LIVE_CHANNEL;
  if (liveChannel !== undefined && liveChannel !== '' && !['0', '1'].includes(liveChannel)) {
    throw new Error(`YIEM_S3_LIVE_CHANNEL=${liveChannel}: expected 1 (the default) or 0`);
  }
  return new S3StorageDriver({
    bucket,
    ...(env.YIEM_S3_PREFIX ? { prefix: env.YIEM_S3_PREFIX } : {}),
    client,
    liveChannel: liveChannel !== '0',
  });
}
