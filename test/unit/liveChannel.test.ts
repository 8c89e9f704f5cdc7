import { mkdtemp, readdir, readFile, rm, utimes } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveEntry } from '../../src/contract/protocol.ts';
import { FileStorageDriver } from '../../src/infrastructure/storage/fileDriver.ts';
import { LiveChannel } from '../../src/infrastructure/storage/liveChannel.ts';
import type { LiveStore } from '../../src/infrastructure/storage/liveStore.ts';

const converter = loadDataConverter();
const logged = (offset: number): LiveEntry => ({
  kind: 'logged',
  offset,
  event: { type: 'turnStart', turn: 1, attempt: 1, seq: offset } as never,
});

const preview: LiveEntry = {
  kind: 'preview',
  origin: 'call-1/1',
  index: 0,
  after: 0,
  event: { type: 'toolStart', turn: 1, attempt: 1, seq: 0 } as never,
};

describe('the live channel on the file store', () => {
  let directory: string;
  let channel: LiveChannel;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'yiem-live-'));
    channel = new LiveChannel(new FileStorageDriver(directory).liveStore(), converter);
  });
  afterEach(async () => {
    vi.restoreAllMocks();
    await rm(directory, { recursive: true, force: true });
  });

  it("reaches a follower with the log's events from a worker whose clock is 3 s behind, but not with what was written 10 s before it came", async () => {
    const now = Date.now();
    const reader = await channel.attach('default', 'conv-1');
    vi.spyOn(Date, 'now').mockReturnValue(now - 10_000);
    await channel.append('default', 'conv-1', [logged(0)]);
    vi.spyOn(Date, 'now').mockReturnValue(now - 3_000);
    // A call's preview then may be of a call that ended before the follower came: it would show it twice.
    await channel.append('default', 'conv-1', [logged(1), preview]);
    vi.spyOn(Date, 'now').mockReturnValue(now + 100);
    await channel.append('default', 'conv-1', [preview]);
    vi.restoreAllMocks();
    expect(await reader.read()).toEqual([logged(1), preview]);
    expect(await reader.read()).toEqual([]);
    await reader.close();
  });

  it('keeps every batch that two channels of one process write in the same millisecond, in order', async () => {
    const other = new LiveChannel(new FileStorageDriver(directory).liveStore(), converter);
    const reader = await channel.attach('default', 'conv-2');
    vi.spyOn(Date, 'now').mockReturnValue(Date.now());
    await Promise.all([
      channel.append('default', 'conv-2', [logged(0)]),
      other.append('default', 'conv-2', [logged(1)]),
      channel.append('default', 'conv-2', [logged(2)]),
    ]);
    vi.restoreAllMocks();
    expect(await reader.read()).toEqual([logged(0), logged(1), logged(2)]);
    await reader.close();
  });

  it('reads the entries of workers of the release before, which name the writer by its process id', async () => {
    const store = new FileStorageDriver(directory).liveStore();
    const reader = await channel.attach('default', 'conv-6');
    // What such a worker wrote: the same encoding, a name with a process id where the writer id goes.
    const other = await mkdtemp(path.join(os.tmpdir(), 'yiem-live-'));
    await new LiveChannel(new FileStorageDriver(other).liveStore(), converter).append('default', 'conv-6', [
      logged(0),
    ]);
    const [written] = await readdir(path.join(other, 'live', 'default', 'conv-6'));
    const oldName = `${String(Date.now()).padStart(15, '0')}-${process.pid}-000000001`;
    await store.write(
      'default/conv-6',
      oldName,
      await readFile(path.join(other, 'live', 'default', 'conv-6', written ?? '')),
    );
    expect(await reader.read()).toEqual([logged(0)]);
    await reader.close();
    await rm(other, { recursive: true, force: true });
  });

  it('counts a follower whose process stopped saying so for 30 s as gone, and the last to leave takes the entries with it', async () => {
    const first = await channel.attach('default', 'conv-3');
    const second = await channel.attach('default', 'conv-3');
    const followersFolder = path.join(directory, 'live', 'default', 'conv-3', 'followers');
    const [stale] = await readdir(followersFolder);
    const longAgo = new Date(Date.now() - 31_000);
    await utimes(path.join(followersFolder, stale ?? ''), longAgo, longAgo);
    expect(await channel.followers('default', 'conv-3')).toHaveLength(1);
    expect(await readdir(followersFolder)).toHaveLength(1);

    await channel.append('default', 'conv-3', [logged(0)]);
    await first.close();
    await second.close();
    expect(await readdir(path.join(directory, 'live', 'default', 'conv-3'))).toEqual(['followers']);
    expect(await channel.followers('default', 'conv-3')).toEqual([]);
  });

  it('copies a conversation only while someone follows it', async () => {
    const warnings: string[] = [];
    const folder = path.join(directory, 'live', 'default', 'conv-4');
    channel.copy('default', 'conv-4', [logged(0)], (message) => warnings.push(message));
    // Time for the copy to list the followers and, had it found one, write: the reader below would read it.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await readdir(folder).catch(() => [])).toEqual([]);
    const reader = await channel.attach('default', 'conv-4');
    channel.copy('default', 'conv-4', [logged(1)], (message) => warnings.push(message));
    channel.copy('default', 'conv-4', [logged(2)], (message) => warnings.push(message));
    await vi.waitFor(async () => expect(await reader.read()).toEqual([logged(1), logged(2)]));
    await reader.close();
    expect(warnings).toEqual([]);
  });
});

describe('the live channel on a store that bills listings (S3)', () => {
  /** An in-memory store counting its listings of followers. */
  function countingStore(): LiveStore & { followerListings: number } {
    const files = new Map<string, { bytes: Uint8Array; writtenAt: number }>();
    const inFolder = (folder: string) =>
      [...files.keys()]
        .filter((key) => key.startsWith(`${folder}/`) && !key.slice(folder.length + 1).includes('/'))
        .map((key) => key.slice(folder.length + 1));
    const store = {
      followerListings: 0,
      readIntervalMs: 100,
      idleReadIntervalMs: 1_000,
      followersListingMs: 1_000,
      names: async (folder: string, after?: string) =>
        inFolder(folder).filter((name) => after === undefined || name > after),
      written: async (folder: string) => {
        if (folder.endsWith('/followers')) store.followerListings += 1;
        return new Map(
          inFolder(folder).map((name) => [name, files.get(`${folder}/${name}`)?.writtenAt ?? 0]),
        );
      },
      write: async (folder: string, name: string, bytes: Uint8Array) => {
        files.set(`${folder}/${name}`, { bytes, writtenAt: Date.now() });
      },
      read: async (folder: string, name: string) => files.get(`${folder}/${name}`)?.bytes,
      remove: async (folder: string, name: string) => {
        files.delete(`${folder}/${name}`);
      },
    };
    return store;
  }

  it("lists a conversation's followers once a second however many calls look, and a leaving follower asks afresh", async () => {
    const store = countingStore();
    const channel = new LiveChannel(store, converter);
    expect(channel.readIntervals).toEqual({ active: 100, idle: 1_000, idleAfter: 2_000 });
    for (let look = 0; look < 5; look++) expect(await channel.followers('default', 'conv-5')).toEqual([]);
    expect(store.followerListings).toBe(1);

    const reader = await channel.attach('default', 'conv-5');
    await channel.append('default', 'conv-5', [logged(0)]);
    expect(await reader.read()).toEqual([logged(0)]);
    await reader.close();
    expect(store.followerListings).toBe(2);
    expect(await store.names('default/conv-5')).toEqual([]);
  });
});
