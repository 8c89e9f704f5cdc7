import { mkdir, mkdtemp, readdir, rename, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { defaultPayloadConverter, StorageDriverClaim } from '@temporalio/common';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_PAYLOAD_THRESHOLD_BYTES } from '../../src/contract/limits.ts';
import { FileStorageDriver } from '../../src/infrastructure/storage/fileDriver.ts';
import {
  defaultPayloadsDir,
  payloadStorageFromEnv,
} from '../../src/infrastructure/storage/payloadStorage.ts';
import { fileStoreIdentity } from '../../src/infrastructure/storage/payloadStoreIdentity.ts';

describe('FileStorageDriver', () => {
  let directory: string;
  beforeEach(async () => {
    directory = await mkdtemp(path.join(os.tmpdir(), 'yiem-driver-'));
  });
  afterEach(() => rm(directory, { recursive: true, force: true }));

  it('stores payloads as files named by their hash and gives them back', async () => {
    const driver = new FileStorageDriver(directory);
    const payloads = ['first', { second: [2] }].map((value) => defaultPayloadConverter.toPayload(value));
    const claims = await driver.store({}, payloads);
    expect(claims.map((claim) => claim.claimData.sha256)).toEqual([
      expect.stringMatching(/^[0-9a-f]{64}$/),
      expect.stringMatching(/^[0-9a-f]{64}$/),
    ]);
    const back = await driver.retrieve({}, claims);
    expect(back.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual([
      'first',
      { second: [2] },
    ]);
  });

  it('writes the same payload once, however often it is stored (retried activities)', async () => {
    const driver = new FileStorageDriver(directory);
    const payload = defaultPayloadConverter.toPayload('again');
    const [first] = await driver.store({}, [payload]);
    const [second] = await driver.store({}, [payload]);
    expect(second?.claimData).toEqual(first?.claimData);
    const files = (await readdir(directory, { recursive: true, withFileTypes: true })).filter((entry) =>
      entry.isFile(),
    );
    expect(files).toHaveLength(1);
  });

  it('says which payload is missing and where it looked', async () => {
    const driver = new FileStorageDriver(directory);
    const claim = new StorageDriverClaim({ sha256: 'a'.repeat(64) });
    await expect(driver.retrieve({}, [claim])).rejects.toThrow(
      `payload ${'a'.repeat(64)} is missing from ${directory}`,
    );
  });

  it('refuses a claim that is not a payload key or group, so no path outside the store is read', async () => {
    const driver = new FileStorageDriver(directory);
    await expect(
      driver.retrieve({}, [new StorageDriverClaim({ sha256: '../../etc/passwd' })]),
    ).rejects.toThrow('is not a payload key');
    await expect(
      driver.retrieve({}, [new StorageDriverClaim({ sha256: 'a'.repeat(64), group: 'workflows/../../' })]),
    ).rejects.toThrow('is not a payload group');
  });

  it('groups payloads by the workflow they are stored for, and sweeps one group at a time', async () => {
    const driver = new FileStorageDriver(directory);
    const storeFor = (id: string, value: string) =>
      driver.store({ target: { kind: 'workflow', namespace: 'default', id } }, [
        defaultPayloadConverter.toPayload(value),
      ]);
    const [kept] = await storeFor('conversation-1', 'kept');
    // Dots are a sub-agent's id's separators, and `..` must not climb out of the store.
    const [dotted] = await storeFor('..', 'dotted');
    const [unowned] = await driver.store({}, [defaultPayloadConverter.toPayload('unowned')]);
    expect(kept?.claimData.group).toBe('workflows/default/conversation-1/');
    expect(dotted?.claimData.group).toBe('workflows/default/%2E%2E/');
    expect(unowned?.claimData.group).toBe('unowned/');
    expect((await driver.listGroups()).sort((a, b) => a.workflowId.localeCompare(b.workflowId))).toEqual([
      { namespace: 'default', workflowId: '..' },
      { namespace: 'default', workflowId: 'conversation-1' },
    ]);

    expect(await driver.deleteGroup({ namespace: 'default', workflowId: '..' }, new Date(0))).toBe(0);
    expect(await driver.deleteGroup({ namespace: 'default', workflowId: '..' })).toBe(1);
    expect(await driver.listGroups()).toEqual([{ namespace: 'default', workflowId: 'conversation-1' }]);
    await expect(driver.retrieve({}, [dotted as StorageDriverClaim])).rejects.toThrow('is missing');
    const back = await driver.retrieve({}, [kept as StorageDriverClaim, unowned as StorageDriverClaim]);
    expect(back.map((payload) => defaultPayloadConverter.fromPayload(payload))).toEqual(['kept', 'unowned']);
  });

  it('still reads a payload stored before grouping, by its old claim', async () => {
    const driver = new FileStorageDriver(directory);
    const payload = defaultPayloadConverter.toPayload('from before');
    const [claim] = await driver.store({}, [payload]);
    const key = claim?.claimData.sha256 ?? '';
    await mkdir(path.join(directory, key.slice(0, 2)));
    await rename(path.join(directory, 'unowned', key), path.join(directory, key.slice(0, 2), key));
    const [back] = await driver.retrieve({}, [new StorageDriverClaim({ sha256: key })]);
    expect(back && defaultPayloadConverter.fromPayload(back)).toBe('from before');
  });
});

describe('payloadStorageFromEnv', () => {
  it('uses <YIEM_DATA_DIR>/payloads and the 32 KB threshold by default', () => {
    const storage = payloadStorageFromEnv({ YIEM_DATA_DIR: '/srv/yiem' });
    expect(storage?.payloadSizeThreshold).toBe(DEFAULT_PAYLOAD_THRESHOLD_BYTES);
    expect((storage?.drivers[0] as FileStorageDriver | undefined)?.directory).toBe('/srv/yiem/payloads');
  });

  it('takes YIEM_PAYLOADS_DIR (a shared volume) and YIEM_PAYLOAD_THRESHOLD_BYTES', () => {
    const storage = payloadStorageFromEnv({
      YIEM_PAYLOADS_DIR: '/mnt/shared',
      YIEM_PAYLOAD_THRESHOLD_BYTES: '1024',
    });
    expect(storage?.payloadSizeThreshold).toBe(1024);
    expect((storage?.drivers[0] as FileStorageDriver | undefined)?.directory).toBe('/mnt/shared');
  });

  it('is off with YIEM_PAYLOAD_STORAGE=off, and refuses a threshold that is not a number', () => {
    expect(payloadStorageFromEnv({ YIEM_PAYLOAD_STORAGE: 'off' })).toBeUndefined();
    expect(() => payloadStorageFromEnv({ YIEM_PAYLOAD_THRESHOLD_BYTES: '32k' })).toThrow(
      'YIEM_PAYLOAD_THRESHOLD_BYTES=32k: expected a number of bytes',
    );
  });
});

describe('the default payload store', () => {
  it('is the user data folder, whatever the working directory; YIEM_DATA_DIR and YIEM_PAYLOADS_DIR win', () => {
    expect(defaultPayloadsDir({ XDG_DATA_HOME: '/home/ann/.data' })).toBe(
      '/home/ann/.data/yiem-agent/payloads',
    );
    expect(defaultPayloadsDir({ HOME: '/home/ann' })).toBe('/home/ann/.local/share/yiem-agent/payloads');
    expect(defaultPayloadsDir({ HOME: '/home/ann', YIEM_DATA_DIR: '/srv/yiem' })).toBe('/srv/yiem/payloads');
    const explicit = payloadStorageFromEnv({ HOME: '/home/ann', YIEM_PAYLOADS_DIR: '/mnt/shared' });
    expect((explicit?.drivers[0] as FileStorageDriver | undefined)?.directory).toBe('/mnt/shared');
  });
});

describe('a store id', () => {
  it('is written once into the store and read back the same by every process', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'yiem-store-id-'));
    try {
      const ids = await Promise.all([1, 2, 3].map(() => fileStoreIdentity(path.join(directory, 'store'))));
      expect(new Set(ids.map((store) => store.id)).size).toBe(1);
      expect(ids[0]?.id).toMatch(/^[0-9a-f]{16}$/);
      const other = await fileStoreIdentity(path.join(directory, 'other'));
      expect(other.id).not.toBe(ids[0]?.id);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });
});
