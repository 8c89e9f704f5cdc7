/**
 * Temporal Cloud bills Actions (https://docs.temporal.io/cloud/actions, read 2026-12-06). The rule
 * the conversation's meter counts by, one Action each for:
 * - a workflow run started (a client's start, a continue-as-new, a child workflow's start);
 * - an activity attempt: the first when it is scheduled, each retry from the attempt number its
 *   result's events carry (a model call's, a tool call's);
 * - the local activities of one workflow task together (one Action however many ran in it);
 * - a timer started (a `condition` with a timeout starts one too);
 * - a search-attribute upsert (however many attributes it changes);
 * - a Signal received or sent, an Update accepted, a Nexus operation scheduled.
 * Billed and left out, since a workflow cannot see them without changing its history: the retries
 * of an activity that failed for good or carries no events, heartbeats that reach the server (with
 * the one each attempt after a worker death sends to keep the count of deaths, workerDeaths.ts),
 * Queries (`status()`, a model call's context read on a cold cache), rejected Updates. Not billed
 * and not counted: `patched()`'s `TemporalChangeVersion` upserts (the dev server's metric counts them). bench/scenarios/actionsPerTurn.ts holds the meter to the server's
 * own `action` metric.
 */

/** What `actions` Actions cost at `pricePerMillion` (`ModelSettings`-style currency). */
export function actionsCost(actions: number, pricePerMillion: number | undefined): number {
  return pricePerMillion ? (actions * pricePerMillion) / 1_000_000 : 0;
}
