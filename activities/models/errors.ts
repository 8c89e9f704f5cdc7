import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** HTTP statuses that another attempt cannot fix: the turn ends and the user is told why. */
const NOT_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/** Which endpoint and model a failed call went to, for its error. */
export interface ModelCallTarget {
  endpoint: string;
  model: string;
}

/**
 * Turns a provider error into the failure Temporal retries (429, 5xx, timeouts, network errors) or
 * does not (400, 401, 403, 404, 422, a request that cannot be built). A 429's Retry-After becomes the
 * delay before the next attempt. Each message names the endpoint and the model.
 */
export function classifyModelError(error: unknown, target: ModelCallTarget): ApplicationFailure | unknown {
  const { endpoint, model } = target;
  if (error instanceof APIConnectionTimeoutError) {
    return ApplicationFailure.retryable(
      `The model ${model} at ${endpoint} did not answer in time: ${error.message}`,
      'ModelTimeout',
    );
  }
  if (error instanceof APIConnectionError) {
    return ApplicationFailure.retryable(
      `Could not reach the model endpoint ${endpoint} (model ${model}): ${withCauses(error)}`,
      'ModelUnreachable',
    );
  }
  if (isInvalidUrl(error)) {
    return ApplicationFailure.create({
      message: `The model endpoint ${endpoint} is not a usable URL: ${error.message}`,
      type: 'ModelEndpointInvalid',
      nonRetryable: true,
    });
  }
  if (!(error instanceof APIError) || error.status === undefined) return error;
  const status = error.status;
  const detail = `The model endpoint answered ${status}: ${providerMessage(error)} (model ${model} at ${endpoint})`;
  if (NOT_RETRYABLE_STATUSES.has(status)) {
    return ApplicationFailure.create({ message: detail, type: 'ModelRequestRejected', nonRetryable: true });
  }
  if (status === 429) {
    const delayMs = retryAfterMs(error.headers);
    return ApplicationFailure.create({
      message: detail,
      type: 'ModelRateLimited',
      ...(delayMs === undefined ? {} : { nextRetryDelay: delayMs }),
    });
  }
  return ApplicationFailure.retryable(detail, 'ModelServerError');
}

/**
 * Whether a classified failure says the endpoint is down or refuses for now (unreachable, timed out,
 * 5xx, a 429 asking to wait more than `maxRateLimitWaitMs` or not saying), so that a call with
 * fallbacks goes on to the next model; a request the endpoint rejects would fail there too.
 */
export function worthAFallback(failure: unknown, maxRateLimitWaitMs: number): boolean {
  if (!(failure instanceof ApplicationFailure)) return false;
  if (failure.type === 'ModelRateLimited') {
    const wait = failure.nextRetryDelay;
    return typeof wait !== 'number' || wait > maxRateLimitWaitMs;
  }
  return ['ModelUnreachable', 'ModelTimeout', 'ModelServerError'].includes(failure.type ?? '');
}

/** `Connection error.` alone says nothing: the causes (`fetch failed`, `connect ECONNREFUSED …`) do. */
function withCauses(error: Error): string {
  const parts = [error.message];
  let cause: unknown = error.cause;
  for (let depth = 0; cause instanceof Error && depth < 4; depth++) {
    if (!parts.includes(cause.message)) parts.push(cause.message);
    cause = cause.cause;
  }
  return parts.join(': ');
}

function isInvalidUrl(error: unknown): error is Error {
  return error instanceof TypeError && (error as { code?: unknown }).code === 'ERR_INVALID_URL';
}

function providerMessage(error: APIError): string {
  const body = error.error as { message?: unknown } | undefined;
  return typeof body?.message === 'string' ? body.message : error.message;
}

/** Retry-After in seconds or as an HTTP date, as milliseconds from now. */
export function retryAfterMs(headers: Headers | undefined, now = Date.now()): number | undefined {
  const milliseconds = Number(headers?.get('retry-after-ms') ?? Number.NaN);
  if (Number.isFinite(milliseconds)) return Math.max(0, milliseconds);
  const value = headers?.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
