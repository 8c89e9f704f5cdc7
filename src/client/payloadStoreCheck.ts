import type { DataConverter } from '@temporalio/common';
import { utf8Bytes } from '../contract/utf8.ts';
import { storeAnnouncementOf } from '../infrastructure/codec/dataConverter.ts';
import { payloadStoreOf } from '../infrastructure/storage/payloadStorage.ts';
import {
  type AnnouncedStore,
  announcementOf,
  describeStore,
  isStore,
  type PayloadStoreIdentity,
} from '../infrastructure/storage/payloadStoreIdentity.ts';
import {
  recentPollers,
  TASK_QUEUE_TYPE_WORKFLOW,
  type TaskQueueService,
} from '../infrastructure/taskQueuePollers.ts';

/** A worker of a queue and the store it announces (undefined: it announces none, payloads stay inline for it). */
export interface WorkerStore {
  identity: string;
  store: AnnouncedStore | undefined;
}

/** Room for the JSON quotes and the codec's envelope (key id, IV, tag) around a message. */
const ENVELOPE_BYTES = 256;

/** The yiem workers polling `taskQueue`'s workflow tasks and the payload store each announces. */
export async function workerStores(
  service: TaskQueueService,
  namespace: string,
  taskQueue: string,
): Promise<WorkerStore[]> {
  const stores: WorkerStore[] = [];
  for (const identity of await recentPollers(service, namespace, taskQueue, TASK_QUEUE_TYPE_WORKFLOW)) {
    const announced = announcementOf(identity);
    if (announced.announced) stores.push({ identity, store: announced.store });
  }
  return stores;
}

/** Why a worker with `worker`'s store cannot read what a process with `own` stores, and how to fix it. */
export function storeMismatch(own: PayloadStoreIdentity, worker: WorkerStore, taskQueue: string): string {
  const theirs = worker.store
    ? `uses the payload store ${describeStore(worker.store)}`
    : 'uses no payload store';
  const inS3 = [own, worker.store].some((store) => store?.location?.startsWith('s3://'));
  const sameStore = inS3
    ? 'set YIEM_PAYLOAD_STORAGE=s3 with the same YIEM_S3_BUCKET, YIEM_S3_PREFIX and YIEM_S3_ENDPOINT for both'
    : 'set YIEM_PAYLOADS_DIR to one folder for both (or unset it on both: the default is the per-user ' +
      'folder ~/.local/share/yiem-agent/payloads)';
  return (
    `Worker ${worker.identity} on task queue "${taskQueue}" ${theirs}; this process uses ${describeStore(own)}. ` +
    `A large payload stored here cannot be read there. Give workers and clients the same store: ${sameStore}, ` +
    'or run `yiem doctor` to see each side.'
  );
}

/**
 * Refuses, before it is sent, a message that would go to the payload store when a worker of the
 * conversation's queue announces another store: that worker could not read the Update, its workflow
 * task would fail on every attempt and the conversation would stop answering. Nothing is sent, so
 * the conversation takes the next message as usual.
 */
export class PayloadStoreCheck {
  readonly #converter: DataConverter | undefined;
  readonly #service: TaskQueueService;
  readonly #namespace: string;

  constructor(converter: DataConverter | undefined, service: TaskQueueService, namespace: string) {
    this.#converter = converter;
    this.#service = service;
    this.#namespace = namespace;
  }

  /** The problem with sending `text` to a conversation on `taskQueue`, if any. */
  async problem(text: string, taskQueue: () => Promise<string>): Promise<string | undefined> {
    const store = await payloadStoreOf(this.#converter?.externalStorage);
    if (!store || utf8Bytes(JSON.stringify(text)) + ENVELOPE_BYTES < store.thresholdBytes) return undefined;
    const queue = await taskQueue();
    const workers = await workerStores(this.#service, this.#namespace, queue);
    const other = workers.find((worker) => !isStore(worker.store, store));
    if (!other) return undefined;
    return `Message not sent (${utf8Bytes(text)} bytes, stored from ${store.thresholdBytes}): ${storeMismatch(store, other, queue)}`;
  }

  /** The store and codec keys of this client, as workers announce theirs. */
  announcement(): ReturnType<typeof storeAnnouncementOf> {
    return storeAnnouncementOf(this.#converter);
  }
}
