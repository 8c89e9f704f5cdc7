import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describeThrown } from '../../contract/thrown.ts';

/**
 * Which payload store a process uses: a random id written once into the store (so two paths to one
 * shared volume are the same store, and two folders are two stores) and where it is.
 */
export interface PayloadStoreIdentity {
  id: string;
  location: string;
}

const ID_FILE = 'store-id';
/** A store id: 16 hex digits, random, written once into the store. */
export const STORE_ID_PATTERN = /^[0-9a-f]{16}$/;

/**
 * The id of the store in `directory`, written by the first process that asks. `wx` makes the
 * first writer win when several processes start at once; the others read its id.
 */
export async function fileStoreIdentity(directory: string): Promise<PayloadStoreIdentity> {
  const file = path.join(directory, ID_FILE);
  const read = async (): Promise<string | undefined> => {
    const text = (await readFile(file, 'utf8').catch(() => '')).trim();
    return STORE_ID_PATTERN.test(text) ? text : undefined;
  };
  const existing = await read();
  if (existing) return { id: existing, location: directory };
  try {
    await mkdir(directory, { recursive: true });
    await writeFile(file, `${randomBytes(8).toString('hex')}\n`, { flag: 'wx' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') {
      throw new Error(`Payload store ${directory}: cannot write its id file (${describeThrown(error)})`);
    }
  }
  const id = await read();
  if (!id) throw new Error(`Payload store ${directory}: ${file} does not hold a store id`);
  return { id, location: directory };
}

/**
 * A store as a worker's identity announces it: the first 8 hex digits of its id (16 from an earlier
 * release), and where it is if an older worker said so.
 */
export interface AnnouncedStore {
  id: string;
  location?: string;
}

const ANNOUNCED_ID_DIGITS = 8;

/** Whether a store a worker announces is `store` (the announcement may hold a prefix of its id). */
export function isStore(
  announced: AnnouncedStore | undefined,
  store: PayloadStoreIdentity | undefined,
): boolean {
  if (!announced || !store) return !announced && !store;
  return store.id.startsWith(announced.id.slice(0, ANNOUNCED_ID_DIGITS));
}

export function describeStore(store: AnnouncedStore): string {
  return store.location ? `${store.location} (store ${store.id})` : `with id ${store.id}`;
}

/**
 * What a worker announces in its Temporal identity about its store and codec keys, so that clients
 * and `yiem doctor` can compare without a round trip: ` p(<the first 8 digits of the store id>)` (` p(-)` without a store) and,
 * with encryption, ` k(<keyId>:<fingerprint>,…)`. Key fingerprints are a hash prefix, never the key.
 * Short because Temporal writes the identity into most events of every conversation's history.
 */
export interface StoreAnnouncement {
  store?: PayloadStoreIdentity;
  /** `keyId:fingerprint` of each codec key, oldest first; absent without encryption. */
  codecKeys?: string[];
}

export function identityWithStore(base: string, announcement: StoreAnnouncement): string {
  const keys = announcement.codecKeys ? ` k(${announcement.codecKeys.join(',')})` : '';
  return `${base} p(${announcement.store?.id.slice(0, ANNOUNCED_ID_DIGITS) ?? '-'})${keys}`;
}

const STORE_TOKEN = / p\(([0-9a-f]{8}|-)\)/;
const KEYS_TOKEN = / k\(([^)]*)\)/;
/** The longer tokens of earlier releases, still read so that a rolling upgrade compares old workers too. */
const OLD_STORE_TOKEN = / payloads\(([0-9a-f]{16}) (.+?)\)(?= yiem\(|$)/;
const OLD_CODEC_TOKEN = / codec\(([^)]*)\)/;

/** What a worker's identity announces; undefined parts were not announced (an older worker, another driver). */
export function announcementOf(identity: string): { store?: AnnouncedStore; codecKeys?: string[] } & {
  announced: boolean;
} {
  const store = STORE_TOKEN.exec(identity);
  if (store) {
    const keys = KEYS_TOKEN.exec(identity)?.[1];
    return {
      announced: true,
      ...(store[1] && store[1] !== '-' ? { store: { id: store[1] } } : {}),
      ...(keys ? { codecKeys: keys.split(',') } : {}),
    };
  }
  const oldStore = OLD_STORE_TOKEN.exec(identity);
  const codecText = OLD_CODEC_TOKEN.exec(identity)?.[1];
  return {
    announced: codecText !== undefined,
    ...(oldStore?.[1] && oldStore[2] ? { store: { id: oldStore[1], location: oldStore[2] } } : {}),
    ...(codecText && codecText !== 'none' ? { codecKeys: codecText.split(',') } : {}),
  };
}
