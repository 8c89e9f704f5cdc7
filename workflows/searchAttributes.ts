import { patched, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import {
  type ConversationSearchStatus,
  YIEM_AGENT,
  YIEM_STATUS,
  YIEM_TURNS,
} from '../src/searchAttributes.ts';

/**
 * Keeps `YiemStatus` and `YiemTurns` current. Only conversations the client started with `YiemAgent`
 * set do so: that proves the namespace has the attributes registered, and a namespace without them
 * would fail every workflow task that upserted them. Histories from before this existed replay unchanged.
 */
export function searchAttributeUpdater(): (status: ConversationSearchStatus, turns: number) => void {
  let last = '';
  return (status, turns) => {
    if (workflowInfo().typedSearchAttributes.get(YIEM_AGENT) === undefined) return;
    if (!patched('yiem-search-attributes')) return;
    const key = `${status}/${turns}`;
    if (key === last) return;
    last = key;
    upsertSearchAttributes([
      { key: YIEM_STATUS, value: status },
      { key: YIEM_TURNS, value: turns },
    ]);
  };
}
