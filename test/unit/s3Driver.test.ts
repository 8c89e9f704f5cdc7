import { describe, expect, it } from 'vitest';
import { payloadStorageFromEnv } from '../../src/infrastructure/storage/payloadStorage.ts';
import { S3StorageDriver } from '../../src/infrastructure/storage/s3Driver.ts';

describe('YIEM_PAYLOAD_STORAGE=s3', () => {
  it('keeps payloads in the bucket and under the prefix the environment names', () => {
    const driver = payloadStorageFromEnv({
      YIEM_PAYLOAD_STORAGE: 's3',
      YIEM_S3_BUCKET: 'conversations',
      YIEM_S3_PREFIX: 'yiem/',
      YIEM_S3_ENDPOINT: 'http://127.0.0.1:9000',
    })?.drivers[0];
    expect(driver).toBeInstanceOf(S3StorageDriver);
    expect((driver as S3StorageDriver).location).toBe('s3://conversations/yiem/ via http://127.0.0.1:9000');
  });

  it('names what is missing or misspelt', () => {
    expect(() => payloadStorageFromEnv({ YIEM_PAYLOAD_STORAGE: 's3' })).toThrow(
      'YIEM_PAYLOAD_STORAGE=s3 needs YIEM_S3_BUCKET, the bucket to keep payloads in',
    );
    expect(() => payloadStorageFromEnv({ YIEM_PAYLOAD_STORAGE: 'S3 ' })).toThrow(
      'YIEM_PAYLOAD_STORAGE=S3 : expected file (the default), s3 or off',
    );
    expect(() =>
      payloadStorageFromEnv({ YIEM_PAYLOAD_STORAGE: 's3', YIEM_S3_BUCKET: 'b', YIEM_S3_LIVE_CHANNEL: 'yes' }),
    ).toThrow('YIEM_S3_LIVE_CHANNEL=yes: expected 1 (the default) or 0');
  });

  it('keeps live channels in the bucket unless YIEM_S3_LIVE_CHANNEL=0', () => {
    const driver = (live?: string) =>
      payloadStorageFromEnv({
        YIEM_PAYLOAD_STORAGE: 's3',
        YIEM_S3_BUCKET: 'conversations',
        ...(live === undefined ? {} : { YIEM_S3_LIVE_CHANNEL: live }),
      })?.drivers[0] as S3StorageDriver;
    expect(driver().liveStore()).toBeDefined();
    expect(driver('1').liveStore()).toBeDefined();
    expect(driver('0').liveStore()).toBeUndefined();
  });
});
