/**
 * Temporal Cloud bills Actions. The server counts the same ones in its `action` metric (by
 * `action_type`: workflow starts and continue-as-new, scheduled activities and retries, heartbeats,
 * signals, accepted and rejected Updates, queries, timers, markers, search-attribute upserts...),
 * recorded by the frontend for every client call and every command a worker completes.
 */
export type ActionCounts = Record<string, number>;

const ACTION_LINE = /^action\{([^}]*)\}\s+([0-9.e+]+)$/;

/** The server's action counters for `namespace`, by action type. */
export async function readActions(metricsUrl: string, namespace = 'default'): Promise<ActionCounts> {
  const response = await fetch(metricsUrl);
  if (!response.ok) throw new Error(`${metricsUrl}: HTTP ${response.status}`);
  const counts: ActionCounts = {};
  for (const line of (await response.text()).split('\n')) {
    const match = ACTION_LINE.exec(line.trim());
    if (!match) continue;
    const labels = Object.fromEntries(
      [...(match[1] ?? '').matchAll(/(\w+)="([^"]*)"/g)].map(([, key, value]) => [key, value]),
    );
    if (labels.namespace !== namespace || !labels.action_type) continue;
    counts[labels.action_type] = (counts[labels.action_type] ?? 0) + Number(match[2]);
  }
  return counts;
}

/** What was counted between two readings; types that did not change are left out. */
export function actionsBetween(before: ActionCounts, after: ActionCounts): ActionCounts {
  const delta: ActionCounts = {};
  for (const [type, count] of Object.entries(after)) {
    const added = count - (before[type] ?? 0);
    if (added > 0) delta[type] = added;
  }
  return delta;
}

export function totalActions(counts: ActionCounts): number {
  return Object.values(counts).reduce((sum, count) => sum + count, 0);
}
