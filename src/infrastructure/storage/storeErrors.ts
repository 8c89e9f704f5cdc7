import { describeThrown } from '../../contract/thrown.ts';

/** The name of an error from a payload store's write, which those who retry it look for. */
export const PAYLOAD_STORE_ERROR = 'PayloadStoreError';

/**
 * A write the payload store could not take, naming the store (`S3 payload store s3://bucket/prefix`,
 * `file payload store /folder`) and why: a bare `connect ECONNREFUSED` says nothing of which service
 * is down, to the model, the user or whoever reads the log.
 */
export function payloadStoreWriteError(store: string, cause: unknown): Error {
  const error = new Error(`${store} could not store a payload: ${describeThrown(cause)}`, { cause });
  error.name = PAYLOAD_STORE_ERROR;
  return error;
}
