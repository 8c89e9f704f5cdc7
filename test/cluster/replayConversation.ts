/**
 * Replays one conversation's history in a process of its own (the across-machines test starts it in
 * another folder): the history is fetched from the server, its payloads read from the store the
 * environment names, and replayed against the workflow bundle. Prints `replayed <events>` on success.
 */
import { readFile } from 'node:fs/promises';
import { Client, Connection } from '@temporalio/client';
import { Worker } from '@temporalio/worker';
import { dataConverterFromEnv } from '../../src/infrastructure/codec/dataConverter.ts';

const [address, workflowId, bundlePath] = process.argv.slice(2);
if (!address || !workflowId || !bundlePath)
  throw new Error('usage: replayConversation <address> <id> <bundle>');
const dataConverter = dataConverterFromEnv(process.env);
const connection = await Connection.connect({ address });
const client = new Client({ connection, ...(dataConverter ? { dataConverter } : {}) });
const history = await client.workflow.getHandle(workflowId).fetchHistory();
await Worker.runReplayHistory(
  {
    workflowBundle: { code: await readFile(bundlePath, 'utf8') },
    ...(dataConverter ? { dataConverter } : {}),
  },
  history,
  workflowId,
);
await connection.close();
console.log(`replayed ${history.events?.length ?? 0}`);
