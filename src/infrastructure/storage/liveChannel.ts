import { randomUUID } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, unlink, utimes, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { LiveEntry } from '../../contract/protocol.ts';
import { describeThrown } from '../../contract/thrown.ts';
import { FileStorageDriver } from './fileDriver.ts';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

/** What a worker's identity ends its `yiem(…)` signature with when it copies events to its store's live channel. */
export const LIVE_ANNOUNCEMENT = ', live';

/** Whether a worker's identity says it copies conversations' events to its store's live channel. */
export function announcesLiveChannel(identity: string): boolean {
  return identity.endsWith(`${LIVE_ANNOUNCEMENT})`);
}

/** A follower counts as present this long after it last said so; it says so every `FOLLOWER_REFRESH_MS`. */
const FOLLOWER_TTL_MS = 30_000;
const FOLLOWER_REFRESH_MS = 10_000;
/** Entries older than this are deleted by the followers who read them: one who falls further behind catches up by query. */
const ENTRY_TTL_MS = 60_000;
/**
 * Entries this process wrote, for their names: one count per process, since a worker writes through
 * two channels on one store (its sink's and its activities'), and a name must not come twice.
 */
let entriesWritten = 0;
/** `<written at, ms>-<process>-<counter>`: sorted by name, the entries of one writer keep their order. */
const ENTRY_NAME = /^(\d{15})-\d+-\d{9}$/;

/**
 * A conversation's live channel: its events copied to the payload store as they happen, so that a
 * follower reads them without a poll Update or signal per batch (each a billed Action and a Web UI
 * row). Workers write only while a follower says it is present; the event log in the workflow stays
 * the record, and a follower catches up from it by query. A folder per conversation under the file
 * store's `live/`: a file per batch of entries (converted and encoded as a payload is, so the codec
 * encrypts them too) and a file per follower, touched while it follows.
 */
export class LiveChannel {
  readonly #root: string;
  readonly #converter: LoadedDataConverter;
  /** Per conversation: what waits to be copied, and the copy before it (copies of one keep their order). */
  readonly #copies = new Map<string, { waiting: LiveEntry[] | undefined; done: Promise<void> }>();

  constructor(directory: string, converter: LoadedDataConverter) {
    this.#root = path.join(directory, 'live');
    this.#converter = converter;
  }

  /** The channel of a data converter whose payload store is the file store; undefined for any other. */
  static of(converter: LoadedDataConverter): LiveChannel | undefined {
    const driver = converter.externalStorage?.drivers[0];
    return driver instanceof FileStorageDriver ? new LiveChannel(driver.directory, converter) : undefined;
  }

  #folder(namespace: string, workflowId: string): string {
    return path.join(this.#root, segment(namespace), segment(workflowId));
  }

  /** Who reads `workflowId`'s channel now: an id per follower. */
  async followers(namespace: string, workflowId: string): Promise<string[]> {
    const folder = path.join(this.#folder(namespace, workflowId), 'followers');
    const present: string[] = [];
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      const file = path.join(folder, name);
      const touched = await stat(file).catch(() => undefined);
      if (touched && Date.now() - touched.mtimeMs < FOLLOWER_TTL_MS) present.push(name);
      // A follower that stopped saying so (its process died) is gone.
      else if (touched) await unlink(file).catch(() => undefined);
    }
    return present;
  }

  /** Writes a batch of entries; a rename makes it appear whole. */
  async append(namespace: string, workflowId: string, entries: LiveEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const folder = this.#folder(namespace, workflowId);
    const counter = String(entriesWritten++ % 1e9).padStart(9, '0');
    const name = `${String(Date.now()).padStart(15, '0')}-${process.pid}-${counter}`;
    const bytes = await this.#encode(entries);
    await mkdir(folder, { recursive: true });
    const temporary = path.join(folder, `${name}.${randomUUID()}.tmp`);
    await writeFile(temporary, bytes);
    await rename(temporary, path.join(folder, name));
  }

  /**
   * Copies what a conversation's log took to its channel if someone follows it. The workflow hands
   * over each event as it publishes it; what one activation publishes becomes one file.
   */
  copy(namespace: string, workflowId: string, entries: LiveEntry[], warn: (message: string) => void): void {
    const key = `${namespace}/${workflowId}`;
    const copies = this.#copies.get(key) ?? { waiting: undefined, done: Promise.resolve() };
    this.#copies.set(key, copies);
    if (copies.waiting) {
      copies.waiting.push(...entries);
      return;
    }
    const waiting = [...entries];
    copies.waiting = waiting;
    copies.done = copies.done
      .then(() => new Promise<void>((resolve) => setImmediate(resolve)))
      .then(async () => {
        copies.waiting = undefined;
        const followers = await this.followers(namespace, workflowId);
        if (followers.length > 0) await this.append(namespace, workflowId, waiting);
      })
      .catch((error) =>
        warn(`Could not copy conversation events to the live channel: ${describeThrown(error)}`),
      )
      .finally(() => {
        if (this.#copies.get(key) === copies && !copies.waiting) this.#copies.delete(key);
      });
  }

  /** Says this process follows `workflowId` until `close()`, and reads what workers write from now on. */
  async attach(namespace: string, workflowId: string): Promise<LiveReader> {
    const folder = this.#folder(namespace, workflowId);
    const presence = path.join(folder, 'followers', randomUUID());
    const attachedAt = Date.now();
    await mkdir(path.dirname(presence), { recursive: true });
    await writeFile(presence, '');
    return new LiveReader(folder, presence, attachedAt, {
      decode: (bytes) => this.#decode(bytes),
      followers: () => this.followers(namespace, workflowId),
    });
  }

  async #encode(entries: LiveEntry[]): Promise<Uint8Array> {
    let payloads = [this.#converter.payloadConverter.toPayload(entries)];
    for (const codec of this.#converter.payloadCodecs) payloads = await codec.encode(payloads);
    const [payload] = payloads;
    if (!payload) throw new Error('The payload codec returned nothing for live events');
    return PayloadProto.encode(payload).finish();
  }

  async #decode(bytes: Uint8Array): Promise<LiveEntry[]> {
    const { metadata, data } = PayloadProto.decode(bytes);
    let payloads: Payload[] = [{ metadata, data }];
    for (const codec of [...this.#converter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
    const [payload] = payloads;
    if (!payload) throw new Error('The payload codec returned nothing for live events');
    return this.#converter.payloadConverter.fromPayload<LiveEntry[]>(payload);
  }
}

/** One follower's reading of a live channel. */
export class LiveReader {
  readonly #folder: string;
  readonly #presence: string;
  readonly #channel: LiveReaderChannel;
  readonly #read = new Set<string>();
  readonly #refresh: NodeJS.Timeout;
  /** Entries written before this were written for other followers; the log has what they hold. */
  readonly #attachedAt: number;

  constructor(folder: string, presence: string, attachedAt: number, channel: LiveReaderChannel) {
    this.#folder = folder;
    this.#presence = presence;
    this.#attachedAt = attachedAt;
    this.#channel = channel;
    this.#refresh = setInterval(() => {
      const now = new Date();
      // Written again if a sweep or another follower's clean-up took it.
      utimes(presence, now, now).catch(() => writeFile(presence, '').catch(() => undefined));
    }, FOLLOWER_REFRESH_MS);
    this.#refresh.unref();
  }

  /** The entries written since the last read, in the order each writer wrote them. */
  async read(): Promise<LiveEntry[]> {
    const names = (await readdir(this.#folder).catch(() => [] as string[]))
      .filter((name) => Number(ENTRY_NAME.exec(name)?.[1]) >= this.#attachedAt && !this.#read.has(name))
      .sort();
    const entries: LiveEntry[] = [];
    for (const name of names) {
      const bytes = await readFile(path.join(this.#folder, name)).catch(() => undefined);
      this.#read.add(name);
      if (bytes) entries.push(...(await this.#channel.decode(bytes)));
    }
    await this.#forgetOld();
    return entries;
  }

  async #forgetOld(): Promise<void> {
    const before = Date.now() - ENTRY_TTL_MS;
    for (const name of this.#read) {
      if (Number(ENTRY_NAME.exec(name)?.[1]) >= before) continue;
      this.#read.delete(name);
      await unlink(path.join(this.#folder, name)).catch(() => undefined);
    }
  }

  /**
   * Stops following. The last follower to go deletes what is left: workers write nothing more until
   * the next one comes, and it reads only what is written after it attached.
   */
  async close(): Promise<void> {
    clearInterval(this.#refresh);
    await unlink(this.#presence).catch(() => undefined);
    if ((await this.#channel.followers()).length > 0) return;
    for (const name of await readdir(this.#folder).catch(() => [] as string[])) {
      if (ENTRY_NAME.test(name)) await unlink(path.join(this.#folder, name)).catch(() => undefined);
    }
  }
}

/** What a reader asks of its channel: to decode a file, and who else follows. */
interface LiveReaderChannel {
  decode(bytes: Uint8Array): Promise<LiveEntry[]>;
  followers(): Promise<string[]>;
}

/** A folder name for `name`, dots too encoded, so no id reads as `.` or `..`. */
function segment(name: string): string {
  return encodeURIComponent(name).replaceAll('.', '%2E');
}
