import type { LoadedDataConverter, StorageDriver, StorageDriverTargetInfo } from '@temporalio/common';
import { StorageDriverClaim } from '@temporalio/common';
import type { StoredContent } from '../../contract/transcript.ts';

/**
 * Values kept in the payload store by reference, outside any Temporal payload: the transcript's
 * large messages. A value is converted and encoded (encrypted) exactly as a payload would be, so it
 * is stored, and read back, only by whoever has the same data converter.
 */
export class ContentStore {
  readonly #converter: LoadedDataConverter;
  readonly #driver: StorageDriver;

  private constructor(converter: LoadedDataConverter, driver: StorageDriver) {
    this.#converter = converter;
    this.#driver = driver;
  }

  /** The store of a client's or worker's data converter; undefined when it has no external storage. */
  static of(converter: LoadedDataConverter): ContentStore | undefined {
    const driver = converter.externalStorage?.drivers[0];
    return driver ? new ContentStore(converter, driver) : undefined;
  }

  /** Stores `value` (`bytes` large); `target`, the conversation, lets a driver such as S3's group its keys. */
  async put(value: unknown, bytes: number, target?: StorageDriverTargetInfo): Promise<StoredContent> {
    let payloads = [this.#converter.payloadConverter.toPayload(value)];
    for (const codec of this.#converter.payloadCodecs) payloads = await codec.encode(payloads);
    const [claim] = await this.#driver.store(target ? { target } : {}, payloads);
    if (!claim) throw new Error(`Payload store driver "${this.#driver.name}" returned no claim`);
    return { driver: this.#driver.name, claim: claim.claimData, bytes };
  }

  async get<T>(stored: StoredContent): Promise<T> {
    const driver = this.#converter.externalStorage?.getDriver(stored.driver);
    if (!driver) {
      throw new Error(
        `A message is in payload store "${stored.driver}", which this data converter does not have`,
      );
    }
    let payloads = await driver.retrieve({}, [new StorageDriverClaim(stored.claim)]);
    for (const codec of [...this.#converter.payloadCodecs].reverse()) payloads = await codec.decode(payloads);
    const [payload] = payloads;
    if (!payload) throw new Error(`Payload store driver "${stored.driver}" returned nothing`);
    return this.#converter.payloadConverter.fromPayload<T>(payload);
  }
}

/** A cache key for a stored value: its driver and claim. */
export function storedKey(stored: StoredContent): string {
  const claim = Object.keys(stored.claim)
    .sort()
    .map((key) => `${key}=${stored.claim[key]}`)
    .join('&');
  return `${stored.driver}:${claim}`;
}
