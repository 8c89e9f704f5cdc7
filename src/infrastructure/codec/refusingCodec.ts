import { defaultPayloadConverter, type Payload, type PayloadCodec } from '@temporalio/common';
import { REFUSED_PAYLOAD_KEY } from '../../contract/refusedPayload.ts';
import { UnencryptedPayloadError } from './aesGcmCodec.ts';

/**
 * A worker's view of `codec`: a payload it refuses as unencrypted decodes to a
 * {@link RefusedPayload} naming the reason, one payload at a time, so a plaintext prompt is refused
 * on its own and the conversation goes on. Any other decoding error still fails.
 */
export function refusingUnencrypted(codec: PayloadCodec): PayloadCodec {
  return {
    encode: (payloads) => codec.encode(payloads),
    decode: (payloads) => Promise.all(payloads.map((payload) => decodeOne(codec, payload))),
  };
}

async function decodeOne(codec: PayloadCodec, payload: Payload): Promise<Payload> {
  try {
    const [decoded] = await codec.decode([payload]);
    return decoded ?? payload;
  } catch (error) {
    if (!(error instanceof UnencryptedPayloadError)) throw error;
    return defaultPayloadConverter.toPayload({ [REFUSED_PAYLOAD_KEY]: error.message });
  }
}
