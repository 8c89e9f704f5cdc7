/** How the console writes figures and times. */

export function formatCost(cost: number | null | undefined): string {
  if (cost === null || cost === undefined) return '—';
  return cost.toFixed(cost < 0.01 && cost > 0 ? 4 : 2);
}

export function formatTime(iso: string): string {
  return new Date(iso).toLocaleString();
}

export function formatJson(value: unknown): string {
  return JSON.stringify(value, null, 1).replace(/\n\s*/g, ' ');
}

/** A short, readable id (`a1b2c3d4`) for conversations started from the console. */
export function newConversationId(): string {
  const bytes = new Uint8Array(6);
  // getRandomValues also works outside a secure context (a console reached over plain HTTP).
  crypto.getRandomValues(bytes);
  return `console-${Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('')}`;
}
