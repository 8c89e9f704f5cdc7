import { ApplicationFailure } from '@temporalio/common';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';

/** HTTP statuses that another attempt cannot fix: the turn ends and the user is told why. */
const NOT_RETRYABLE_STATUSES = new Set([400, 401, 403, 404, 422]);

/**
 * Turns a provider error into the failure Temporal retries (429, 5xx, timeouts, network errors) or
 * does not (400, 401, 403, 404, 422). A 429's Retry-After becomes the delay before the next attempt.
 */
export function classifyModelError(error: unknown): ApplicationFailure | unknown {
  if (error instanceof APIConnectionTimeoutError) {
    return ApplicationFailure.retryable(`The model did not answer in time: ${error.message}`, 'ModelTimeout');
  }
  if (error instanceof APIConnectionError) {
    return ApplicationFailure.retryable(
      `Could not reach the model endpoint: ${error.message}`,
      'ModelUnreachable',
    );
  }
  if (!(error instanceof APIError) || error.status === undefined) return error;
  const status = error.status;
  const detail = `The model endpoint answered ${status}: ${providerMessage(error)}`;
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
