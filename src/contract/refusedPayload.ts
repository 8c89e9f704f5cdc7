/**
 * What a worker's workflow code sees in place of a payload its codec refused (one that was not
 * encrypted): a plain object with the reason, so the conversation can refuse that one input with a
 * clear error. Failing to decode instead would fail every workflow task of the conversation for good.
 * Pure, so workflow code imports it.
 */
export const REFUSED_PAYLOAD_KEY = '__yiemRefusedPayload';

export interface RefusedPayload {
  [REFUSED_PAYLOAD_KEY]: string;
}

/** Why `value` was refused by the worker's codec, or undefined when it is an ordinary value. */
export function refusedPayloadReason(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const reason = (value as Partial<RefusedPayload>)[REFUSED_PAYLOAD_KEY];
  return typeof reason === 'string' ? reason : undefined;
}
