/**
 * The fairness key a conversation's model calls share on a rate-limited model's queue. Workflow-safe.
 */

import { MAX_FAIRNESS_KEY_BYTES } from './limits.ts';
import { utf8Bytes, utf8Prefix } from './utf8.ts';

/** FNV-1a over the id's UTF-16 units, as 8 hex digits: enough to keep long ids apart. */
function shortHash(text: string): string {
  let hash = 0x811c9dc5;
  for (let index = 0; index < text.length; index++) {
    hash ^= text.charCodeAt(index);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash.toString(16).padStart(8, '0');
}

/**
 * The conversation's id when the server takes it as a fairness key, else its beginning and a hash of
 * the whole id (a conversation id may be longer than `MAX_FAIRNESS_KEY_BYTES`, an eval's replay's
 * often is). Only ids over the limit change: a schedule with one never reached a history.
 */
export function fairnessKeyOf(conversationId: string): string {
  if (utf8Bytes(conversationId) <= MAX_FAIRNESS_KEY_BYTES) return conversationId;
  return `${utf8Prefix(conversationId, MAX_FAIRNESS_KEY_BYTES - 9)}~${shortHash(conversationId)}`;
}
