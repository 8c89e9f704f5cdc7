import { randomBytes, randomUUID } from 'node:crypto';
import type { LoadedDataConverter, Payload } from '@temporalio/common';
import proto from '@temporalio/proto';
import { LRUCache } from 'lru-cache';
import type { LiveEntry } from '../../contract/protocol.ts';
import { describeThrown } from '../../contract/thrown.ts';
import type { LiveStore } from './liveStore.ts';

// A CommonJS module: Node's ESM loader does not see its named exports.
const { Payload: PayloadProto } = proto.temporal.api.common.v1;

/** What a worker's identity ends its `yiem(…)` signature with when it copies events to its store's live channel. */
export const LIVE_ANNOUNCEMENT = ' L';
/** The same announcement in the identities of earlier releases. */
export const OLD_LIVE_ANNOUNCEMENT = ', live';

/** Whether a worker's identity says it copies conversations' events to its store's live channel. */
export function announcesLiveChannel(identity: string): boolean {
  return [LIVE_ANNOUNCEMENT, OLD_LIVE_ANNOUNCEMENT].some((mark) => identity.endsWith(`${mark})`));
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
/** This process among the writers of a store that machines share (a process id alone may come twice). */
const WRITER = randomBytes(6).toString('hex');
/**
 * `<written at, ms>-<writer>-<counter>`: sorted by name, the entries of one writer keep their order.
 * Workers of the release before name the writer by its process id, which this reads too.
 */
const ENTRY_NAME = /^(\d{15})-[0-9a-f]+-\d{9}$/;
/**
 * A follower reads the logged entries written from this long before it attached: the clocks of
 * machines that share a store may differ by this much. What it reads again is in the log it caught
 * up from, and goes by offset. Previews it takes only from after it attached: one of a call that
 * ended before then would show the call again.
 */
const CLOCK_SKEW_MS = 5_000;
/** A follower reads at its store's idle interval once nothing came for this long. */
const IDLE_AFTER_MS = 2_000;

/**
 * A conversation's live channel: its events copied to the payload store as they happen, so that a
 * follower reads them without a poll Update or signal per batch (each a billed Action and a Web UI
 * row). Workers write only while a follower says it is present; the event log in the workflow stays
 * the record, and a follower catches up from it by query. A folder per conversation under the
 * store's `live/` (a folder of the file store, a prefix of the S3 bucket): a file per batch of
 * entries (converted and encoded as a payload is, so the codec encrypts them too) and a file per
 * follower, written again while it follows.
 */
export class LiveChannel {
  readonly #store: LiveStore;
  readonly #converter: LoadedDataConverter;
  /** Per conversation: what waits to be copied, and the copy before it (copies of one keep their order). */
  readonly #copies = new Map<string, { waiting: LiveEntry[] | undefined; done: Promise<void> }>();
  /** The last listing of each conversation's followers, reused for the store's `followersListingMs`. */
  readonly #followers: LRUCache<string, string[]> | undefined;

  constructor(store: LiveStore, converter: LoadedDataConverter) {
    this.#store = store;
    this.#converter = converter;
    this.#followers =
      store.followersListingMs > 0 ? new LRUCache({ max: 10_000, ttl: store.followersListingMs }) : undefined;
  }

  /** The channel of a data converter whose payload store keeps live channels; undefined for any other. */
  static of(converter: LoadedDataConverter): LiveChannel | undefined {
    const driver = converter.externalStorage?.drivers[0] as { liveStore?: () => LiveStore | undefined };
    const store = typeof driver?.liveStore === 'function' ? driver.liveStore() : undefined;
    return store ? new LiveChannel(store, converter) : undefined;
  }

  /** How often a follower reads: while entries come, and once they stopped for a while. */
  get readIntervals(): { active: number; idle: number; idleAfter: number } {
    return {
      active: this.#store.readIntervalMs,
      idle: this.#store.idleReadIntervalMs,
      idleAfter: IDLE_AFTER_MS,
    };
  }

  /** Who reads `workflowId`'s channel now: an id per follower. `fresh`: not a listing reused. */
  async followers(namespace: string, workflowId: string, fresh = false): Promise<string[]> {
    const key = `${namespace}/${workflowId}`;
    const reused = fresh ? undefined : this.#followers?.get(key);
    if (reused) return reused;
    const folder = `${conversationFolder(namespace, workflowId)}/followers`;
    const present: string[] = [];
    for (const [name, writtenAt] of await this.#store.written(folder)) {
      if (Date.now() - writtenAt < FOLLOWER_TTL_MS) present.push(name);
      // A follower that stopped saying so (its process died) is gone.
      else await this.#store.remove(folder, name).catch(() => undefined);
    }
    this.#followers?.set(key, present);
    return present;
  }

  /** Writes a batch of entries as one file. */
  async append(namespace: string, workflowId: string, entries: LiveEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const counter = String(entriesWritten++ % 1e9).padStart(9, '0');
    const name = `${timeName(Date.now())}-${WRITER}-${counter}`;
    await this.#store.write(conversationFolder(namespace, workflowId), name, await this.#encode(entries));
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
    const folder = conversationFolder(namespace, workflowId);
    const presence = randomUUID();
    const attachedAt = Date.now();
    const store = this.#store;
    await store.write(`${folder}/followers`, presence, new Uint8Array());
    return new LiveReader(attachedAt, {
      names: (after) => store.names(folder, after),
      read: async (name) => {
        const bytes = await store.read(folder, name);
        return bytes ? this.#decode(bytes) : undefined;
      },
      remove: (name) => store.remove(folder, name),
      present: () => store.write(`${folder}/followers`, presence, new Uint8Array()),
      leave: async () => {
        await store.remove(`${folder}/followers`, presence);
        return (await this.followers(namespace, workflowId, true)).length === 0;
      },
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
  readonly #channel: LiveReaderChannel;
  readonly #read = new Set<string>();
  readonly #refresh: NodeJS.Timeout;
  /** Entries named before this were written for other followers; the log has what they hold. */
  readonly #from: string;
  /** Of the entries named before this, only the logged ones are for this follower. */
  readonly #attachedAt: string;

  constructor(attachedAt: number, channel: LiveReaderChannel) {
    this.#from = timeName(attachedAt - CLOCK_SKEW_MS);
    this.#attachedAt = timeName(attachedAt);
    this.#channel = channel;
    // Written again too if a sweep or another follower's clean-up took it.
    this.#refresh = setInterval(() => void channel.present().catch(() => undefined), FOLLOWER_REFRESH_MS);
    this.#refresh.unref();
  }

  /** The entries written since the last read, in the order each writer wrote them. */
  async read(): Promise<LiveEntry[]> {
    const names = (await this.#channel.names(this.#from))
      .filter((name) => ENTRY_NAME.test(name) && !this.#read.has(name))
      .sort();
    const entries: LiveEntry[] = [];
    for (const name of names) {
      const read = (await this.#channel.read(name)) ?? [];
      this.#read.add(name);
      const early = name < this.#attachedAt;
      entries.push(...read.filter((entry) => !early || entry.kind === 'logged'));
    }
    await this.#forgetOld();
    return entries;
  }

  async #forgetOld(): Promise<void> {
    const before = Date.now() - ENTRY_TTL_MS;
    for (const name of this.#read) {
      if (Number(ENTRY_NAME.exec(name)?.[1]) >= before) continue;
      this.#read.delete(name);
      await this.#channel.remove(name).catch(() => undefined);
    }
  }

  /**
   * Stops following. The last follower to go deletes what is left: workers write nothing more until
   * the next one comes, and it reads only what is written after it attached.
   */
  async close(): Promise<void> {
    clearInterval(this.#refresh);
    if (!(await this.#channel.leave().catch(() => false))) return;
    for (const name of await this.#channel.names().catch(() => [] as string[])) {
      if (ENTRY_NAME.test(name)) await this.#channel.remove(name).catch(() => undefined);
    }
  }
}

/** What a reader asks of its channel. */
interface LiveReaderChannel {
  /** The channel's files named after `after` (all, without it). */
  names(after?: string): Promise<string[]>;
  /** A file's entries; undefined once it is gone. */
  read(name: string): Promise<LiveEntry[] | undefined>;
  remove(name: string): Promise<void>;
  /** Says again that this follower is present. */
  present(): Promise<void>;
  /** Says this follower left; true if no other is present. */
  leave(): Promise<boolean>;
}

/** A conversation's folder in the live store. */
function conversationFolder(namespace: string, workflowId: string): string {
  return `${segment(namespace)}/${segment(workflowId)}`;
}

/** The start of an entry's name written at `ms`: names sort as their times do. */
function timeName(ms: number): string {
  return String(Math.max(0, ms)).padStart(15, '0');
}

/** A folder name for `name`, dots too encoded, so no id reads as `.` or `..`. */
function segment(name: string): string {
  return encodeURIComponent(name).replaceAll('.', '%2E');
}
