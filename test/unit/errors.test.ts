import { ApplicationFailure } from '@temporalio/common';
import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { describe, expect, it } from 'vitest';
import { classifyModelError, retryAfterMs } from '../../activities/models/errors.ts';

function apiError(status: number, message: string, headers: Record<string, string> = {}): APIError {
  return APIError.generate(
    status,
    { error: { message, type: 'invalid_request_error' } },
    message,
    new Headers(headers),
  );
}

const TARGET = { endpoint: 'http://models.local/v1', model: 'gpt-test' };
const NAMED = '(model gpt-test at http://models.local/v1)';

function asFailure(value: unknown): ApplicationFailure {
  expect(value).toBeInstanceOf(ApplicationFailure);
  return value as ApplicationFailure;
}

describe('classifyModelError', () => {
  it.each([400, 401, 403, 404, 422])(
    'makes %i a non-retryable ModelRequestRejected with the provider message',
    (status) => {
      const failure = asFailure(classifyModelError(apiError(status, `provider says no (${status})`), TARGET));
      expect(failure.type).toBe('ModelRequestRejected');
      expect(failure.nonRetryable).toBe(true);
      expect(failure.message).toBe(
        `The model endpoint answered ${status}: provider says no (${status}) ${NAMED}`,
      );
    },
  );

  it('uses the message from the error body, not the SDK-formatted message', () => {
    const error = APIError.generate(
      404,
      { error: { message: 'The model `gpt-99` does not exist' } },
      undefined,
      new Headers(),
    );
    const failure = asFailure(classifyModelError(error, TARGET));
    expect(failure.message).toBe(
      `The model endpoint answered 404: The model \`gpt-99\` does not exist ${NAMED}`,
    );
  });

  it("falls back to the SDK's message when the body has none", () => {
    const error = APIError.generate(401, undefined, 'Unauthorized', new Headers());
    const failure = asFailure(classifyModelError(error, TARGET));
    expect(failure.message).toContain('The model endpoint answered 401:');
    expect(failure.message).toContain('Unauthorized');
  });

  it('makes 429 retryable and waits as long as retry-after (seconds) says', () => {
    const failure = asFailure(
      classifyModelError(apiError(429, 'Rate limit reached', { 'retry-after': '2' }), TARGET),
    );
    expect(failure.type).toBe('ModelRateLimited');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBe(2000);
    expect(failure.message).toBe(`The model endpoint answered 429: Rate limit reached ${NAMED}`);
  });

  it('prefers retry-after-ms over retry-after', () => {
    const error = new OpenAI.RateLimitError(
      429,
      { message: 'slow down' },
      undefined,
      new Headers({ 'retry-after-ms': '1500', 'retry-after': '9' }),
    );
    const failure = asFailure(classifyModelError(error, TARGET));
    expect(failure.type).toBe('ModelRateLimited');
    expect(failure.nextRetryDelay).toBe(1500);
    expect(failure.message).toContain('slow down');
  });

  it('leaves the delay to the retry policy when a 429 has no retry-after', () => {
    const failure = asFailure(classifyModelError(apiError(429, 'quota'), TARGET));
    expect(failure.nonRetryable).toBe(false);
    expect(failure.nextRetryDelay).toBeUndefined();
  });

  it.each([500, 502, 503])('makes %i a retryable ModelServerError', (status) => {
    const failure = asFailure(classifyModelError(apiError(status, 'overloaded'), TARGET));
    expect(failure.type).toBe('ModelServerError');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe(`The model endpoint answered ${status}: overloaded ${NAMED}`);
  });

  it('makes a timeout a retryable ModelTimeout', () => {
    const failure = asFailure(classifyModelError(new APIConnectionTimeoutError(), TARGET));
    expect(failure.type).toBe('ModelTimeout');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toContain('The model gpt-test at http://models.local/v1 did not answer in time');
  });

  it('makes a connection error a retryable ModelUnreachable naming the endpoint, the model and the causes', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), { code: 'ECONNREFUSED' });
    const fetchFailed = new TypeError('fetch failed', { cause: refused });
    const failure = asFailure(classifyModelError(new APIConnectionError({ cause: fetchFailed }), TARGET));
    expect(failure.type).toBe('ModelUnreachable');
    expect(failure.nonRetryable).toBe(false);
    expect(failure.message).toBe(
      'Could not reach the model endpoint http://models.local/v1 (model gpt-test): Connection error.: fetch failed: connect ECONNREFUSED 127.0.0.1:9',
    );
  });

  it('does not retry a request whose URL cannot be built', () => {
    const invalid = Object.assign(new TypeError('Invalid URL'), { code: 'ERR_INVALID_URL' });
    const failure = asFailure(classifyModelError(invalid, TARGET));
    expect(failure.nonRetryable).toBe(true);
    expect(failure.message).toBe(
      'The model endpoint http://models.local/v1 is not a usable URL: Invalid URL',
    );
  });

  it('passes an unrelated error through unchanged', () => {
    const error = new TypeError('cannot read x of undefined');
    expect(classifyModelError(error, TARGET)).toBe(error);
    expect(classifyModelError('a string', TARGET)).toBe('a string');
  });

  it('passes an aborted request (no status) through unchanged', () => {
    const error = new APIUserAbortError();
    expect(classifyModelError(error, TARGET)).toBe(error);
  });

  // Regression: a non-numeric retry-after-ms becomes a NaN delay, which Temporal cannot encode
  // (`msToTs(NaN)` throws "Invalid millis NaN") when the failure is reported.
  it('ignores a non-numeric retry-after-ms instead of producing NaN', () => {
    const failure = asFailure(
      classifyModelError(apiError(429, 'rate', { 'retry-after-ms': 'soon' }), TARGET),
    );
    expect(failure.nextRetryDelay).toBeUndefined();
  });
});

describe('retryAfterMs', () => {
  const now = Date.parse('2024-01-01T00:00:00Z');

  it('reads seconds', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': '2' }), now)).toBe(2000);
    expect(retryAfterMs(new Headers({ 'retry-after': '0.5' }), now)).toBe(500);
  });

  it('reads an HTTP date as the time left from now', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': 'Mon, 01 Jan 2024 00:00:05 GMT' }), now)).toBe(5000);
  });

  it('never returns a negative delay', () => {
    expect(retryAfterMs(new Headers({ 'retry-after': 'Sun, 31 Dec 2023 23:59:00 GMT' }), now)).toBe(0);
    expect(retryAfterMs(new Headers({ 'retry-after': '-3' }), now)).toBe(0);
  });

  it('returns undefined without headers, without the header, or for garbage', () => {
    expect(retryAfterMs(undefined, now)).toBeUndefined();
    expect(retryAfterMs(new Headers(), now)).toBeUndefined();
    expect(retryAfterMs(new Headers({ 'retry-after': 'whenever' }), now)).toBeUndefined();
  });

  it('reads retry-after-ms as milliseconds', () => {
    expect(retryAfterMs(new Headers({ 'retry-after-ms': '250' }), now)).toBe(250);
  });
});
