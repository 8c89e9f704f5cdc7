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

export function describeStore(store: PayloadStoreIdentity): string {
  return `${store.location} (store ${store.id})`;
}

/**
 * What a worker announces in its Temporal identity about its store and codec keys, so that clients
 * and `yiem doctor` can compare without a round trip: `payloads(<id> <location>)` and
 * `codec(<keyId>:<fingerprint>,…)`. Key fingerprints are a hash prefix, never the key.
 */
export interface StoreAnnouncement {
  store?: PayloadStoreIdentity;
  /** `keyId:fingerprint` of each codec key, oldest first; absent without encryption. */
  codecKeys?: string[];
}

export function identityWithStore(base: string, announcement: StoreAnnouncement): string {
  const codec = announcement.codecKeys ? ` codec(${announcement.codecKeys.join(',')})` : ' codec(none)';
  const store = announcement.store
    ? ` payloads(${announcement.store.id} ${announcement.store.location})`
    : '';
  return `${base}${codec}${store}`;
}

const STORE_TOKEN = / payloads\(([0-9a-f]{16}) (.+?)\)(?= yiem\(|$)/;
const CODEC_TOKEN = / codec\(([^)]*)\)/;

/** What a worker's identity announces; undefined parts were not announced (an older worker, another driver). */
export function announcementOf(identity: string): { store?: PayloadStoreIdentity; codecKeys?: string[] } & {
  announced: boolean;
} {
  const store = STORE_TOKEN.exec(identity);
  const codec = CODEC_TOKEN.exec(identity);
  const codecText = codec?.[1];
  return {
    announced: Boolean(codec),
    ...(store?.[1] && store[2] ? { store: { id: store[1], location: store[2] } } : {}),
    ...(codecText && codecText !== 'none' ? { codecKeys: codecText.split(',') } : {}),
  };
}
