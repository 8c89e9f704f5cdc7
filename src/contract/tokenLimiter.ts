/**
 * A model's tokens per minute, held for the whole fleet by one small workflow per model
 * (workflows/tokenLimiter.ts): each model call reserves its estimated tokens before it is sent and
 * reports what it used after. The window arithmetic lives here, pure, so it is tested alone.
 */
import { defineSignal, defineUpdate } from '@temporalio/workflow';

/** The window providers count tokens per minute in. */
export const TOKEN_WINDOW_MS = 60_000;

/** One model call's tokens in the window: reserved at `at` (epoch ms), corrected once it is known. */
export interface TokenReservation {
  id: string;
  at: number;
  tokens: number;
}

/** What a limiter workflow starts (and continues as new) with. */
export interface TokenLimiterState {
  tokensPerMinute: number;
  windowMs: number;
  reservations: TokenReservation[];
}

/** A call asking for room: its id (for the later correction) and its estimated tokens. */
export interface TokenRequest {
  id: string;
  tokens: number;
}

/** Reserves a call's tokens: 0 when reserved, else the milliseconds to wait before asking again. */
export const reserveTokensUpdate = defineUpdate<number, [request: TokenRequest]>('reserveTokens');

/** Corrects a reservation with the tokens the call really used (the provider's `usage`). */
export const settleTokensSignal = defineSignal<[request: TokenRequest]>('settleTokens');

/** The reservations still inside the window at `now`, oldest first. */
export function withinWindow(
  reservations: readonly TokenReservation[],
  now: number,
  windowMs: number,
): TokenReservation[] {
  return reservations.filter((reservation) => reservation.at > now - windowMs);
}

/**
 * How long a call of `tokens` waits until the window has room for it (0: it fits now): the time
 * until enough of the oldest reservations have left the window.
 */
export function tokenWait(
  reservations: readonly TokenReservation[],
  tokens: number,
  now: number,
  limit: number,
  windowMs: number,
): number {
  const live = withinWindow(reservations, now, windowMs).sort((a, b) => a.at - b.at);
  let used = live.reduce((sum, reservation) => sum + reservation.tokens, 0);
  if (used + tokens <= limit) return 0;
  for (const reservation of live) {
    used -= reservation.tokens;
    if (used + tokens <= limit) return reservation.at + windowMs - now;
  }
  // Only a call above the whole limit gets here; the worker refuses those before asking.
  return windowMs;
}

/** The limiter workflow of a model's calls on a task queue, one for the fleet. */
export function tokenLimiterWorkflowId(taskQueue: string, model: string): string {
  return `yiem-token-limiter-${taskQueue}-${model}`;
}
