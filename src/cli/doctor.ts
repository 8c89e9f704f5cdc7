import { describeModel, modelEndpoint, resolveModelSettings } from '../../activities/models/settings.ts';
import { AgentClient } from '../client/client.ts';
import { storeMismatch } from '../client/payloadStoreCheck.ts';
import { describeThrown } from '../contract/thrown.ts';
import { dataConverterFromEnv, storeAnnouncementOf } from '../infrastructure/codec/dataConverter.ts';
import {
  missingSearchAttributes,
  missingSearchAttributesMessage,
  waitForServer,
} from '../infrastructure/server/index.ts';
import { announcementOf, describeStore, isStore } from '../infrastructure/storage/payloadStoreIdentity.ts';
import { TASK_QUEUE_TYPE_ACTIVITY, TASK_QUEUE_TYPE_WORKFLOW } from '../infrastructure/taskQueuePollers.ts';
import { pollerStates } from '../infrastructure/workerLiveness.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';
import { MODEL_VARIABLES, wantsDemoModel } from './demoModel.ts';
import { cliEnvironment } from './environment.ts';

/** One cheap request to the model endpoint waits at most this long. */
const MODEL_CHECK_MS = 5_000;

/** One line of the report: what was checked, whether it holds, and what was found or how to fix it. */
interface Check {
  name: string;
  ok: boolean;
  detail: string;
}

/**
 * `yiem doctor`: checks, against the running server, what a conversation needs from this machine's
 * settings: the server answers, workers poll the task queue, they use this client's payload store
 * and its codec keys. Prints one line per check and fails (exit code 1) when one does not hold.
 */
export async function doctorCommand(flags: ConnectionFlags): Promise<void> {
  const checks = await runChecks(flags);
  for (const check of checks) console.log(`${check.ok ? 'ok  ' : 'FAIL'} ${check.name}: ${check.detail}`);
  if (checks.some((check) => !check.ok)) process.exitCode = 1;
}

async function runChecks(flags: ConnectionFlags): Promise<Check[]> {
  const config = connectionConfig(flags);
  const converter = dataConverterFromEnv(cliEnvironment());
  const own = await storeAnnouncementOf(converter);
  const checks: Check[] = [
    {
      name: 'this client',
      ok: true,
      detail: `payload store ${own.store ? describeStore(own.store) : 'none (payloads inline)'}, codec ${describeKeys(own)}`,
    },
    await modelCheck(cliEnvironment()),
  ];
  const reachable = config.tls ? Promise.resolve() : waitForServer(config.address, 5_000);
  const client = new AgentClient({ ...config, ...(converter ? { dataConverter: converter } : {}) });
  try {
    try {
      await reachable;
      await client.client.workflowService.getSystemInfo({});
    } catch (error) {
      checks.push({
        name: 'server',
        ok: false,
        detail: `no Temporal server answers at ${config.address} (${describeThrown(error)}). Start one with "yiem server" (or "yiem dev"), or set TEMPORAL_ADDRESS.`,
      });
      return checks;
    }
    checks.push({ name: 'server', ok: true, detail: `${config.address}, namespace ${config.namespace}` });
    checks.push(await searchAttributesCheck(client, config));

    // The queue asked about is looked at first: among many recent conversations it may come past the limit.
    const served = (await client.workers?.queuesWithWorkers(undefined, [config.taskQueue])) ?? [];
    const servedList = served.length > 0 ? served.map((each) => `"${each}"`).join(', ') : 'none';
    checks.push({ name: 'queues', ok: true, detail: `task queues with yiem workers: ${servedList}` });

    const service = client.client.workflowService;
    const queue = config.taskQueue;
    // Workers that stopped are left out: the server lists them for minutes.
    const running = async (type: number) =>
      (await pollerStates(service, config.namespace, queue, type))
        .filter((state) => !state.gone)
        .map(({ identity }) => identity);
    const workflowPollers = await running(TASK_QUEUE_TYPE_WORKFLOW);
    const activityPollers = await running(TASK_QUEUE_TYPE_ACTIVITY);
    const workers = [...new Set([...workflowPollers, ...activityPollers])];
    if (workflowPollers.length === 0) {
      checks.push({
        name: 'workers',
        ok: false,
        detail: `no worker polls task queue "${queue}" for conversations (task queues with yiem workers: ${servedList}). Start one with "yiem worker --task-queue ${queue}" (or set YIEM_TASK_QUEUE the same on both sides).`,
      });
      return checks;
    }
    checks.push({
      name: 'workers',
      ok: true,
      detail: `${workers.length} on task queue "${queue}": ${workers.join('; ')}`,
    });

    checks.push(...agreementChecks(own, workers, queue));
    return checks;
  } finally {
    await client.close();
  }
}

/** Whether the namespace has yiem's search attributes; without some, conversations run unsearchable by them. */
async function searchAttributesCheck(
  client: AgentClient,
  config: { address: string; namespace: string },
): Promise<Check> {
  const name = 'search attributes';
  try {
    const missing = await missingSearchAttributes(client.client.connection.operatorService, config.namespace);
    if (missing.length === 0)
      return { name, ok: true, detail: `namespace ${config.namespace} has all of yiem's` };
    return {
      name,
      ok: false,
      detail: missingSearchAttributesMessage(config.namespace, missing, config.address),
    };
  } catch (error) {
    return {
      name,
      ok: true,
      detail: `not checked: the server would not list them (${describeThrown(error)})`,
    };
  }
}

/** Whether the queue's workers use this client's payload store and codec keys, as their identities announce. */
function agreementChecks(
  own: Awaited<ReturnType<typeof storeAnnouncementOf>>,
  workers: string[],
  queue: string,
): Check[] {
  const checks: Check[] = [];
  const announced = workers.map((identity) => ({ identity, ...announcementOf(identity) }));
  const silent = announced.filter((worker) => !worker.announced).map((worker) => worker.identity);
  const storeProblems = announced.flatMap(({ identity, announced: said, store }) => {
    if (!said || isStore(store, own.store)) return [];
    if (own.store) return [storeMismatch(own.store, { identity, store }, queue)];
    return [
      `Worker ${identity} uses the payload store ${store ? describeStore(store) : '?'}; this client uses none, so it cannot read large messages: unset YIEM_PAYLOAD_STORAGE=off.`,
    ];
  });
  const unknown = silent.length > 0 ? ` (not announced by ${silent.join('; ')})` : '';
  checks.push(
    storeProblems.length > 0
      ? { name: 'payload store', ok: false, detail: storeProblems.join(' ') }
      : { name: 'payload store', ok: true, detail: `workers and this client use the same store${unknown}` },
  );

  const keyProblems = announced
    .filter((worker) => worker.announced && !keysAgree(own.codecKeys, worker.codecKeys))
    .map(
      (worker) =>
        `Worker ${worker.identity} has codec keys ${describeKeys(worker)}, this client ${describeKeys(own)} (key id:fingerprint, newest last). Each side must hold the key the other encrypts with: give both the same YIEM_CODEC_KEYS or YIEM_CODEC_KEY_FILE.`,
    );
  checks.push(
    keyProblems.length > 0
      ? { name: 'codec keys', ok: false, detail: keyProblems.join(' ') }
      : {
          name: 'codec keys',
          ok: true,
          detail: `workers and this client agree (${describeKeys(own)})${unknown}`,
        },
  );
  return checks;
}

function describeKeys(side: { codecKeys?: string[] }): string {
  return side.codecKeys ? side.codecKeys.join(', ') : 'none (unencrypted)';
}

/** Each side holds the key the other encrypts with (the last one), with the same fingerprint. */
function keysAgree(own: string[] | undefined, theirs: string[] | undefined): boolean {
  if (!own || !theirs) return !own && !theirs;
  const ownCurrent = own.at(-1);
  const theirCurrent = theirs.at(-1);
  return Boolean(ownCurrent && theirCurrent && theirs.includes(ownCurrent) && own.includes(theirCurrent));
}

/**
 * Whether the model endpoint the environment names answers, asked once (`GET <base URL>/models`, no
 * tokens spent): a worker starts without asking, and its first turn would fail instead.
 */
async function modelCheck(env: NodeJS.ProcessEnv): Promise<Check> {
  const name = 'model';
  if (wantsDemoModel(env)) {
    return {
      name,
      ok: true,
      detail: `none set (${MODEL_VARIABLES}): yiem worker and yiem dev use the offline demo model`,
    };
  }
  let settings: ReturnType<typeof resolveModelSettings>;
  try {
    settings = resolveModelSettings({}, env);
  } catch (error) {
    return { name, ok: false, detail: describeThrown(error) };
  }
  const endpoint = modelEndpoint(settings);
  try {
    const response = await fetch(`${endpoint.replace(/\/+$/, '')}/models`, {
      headers: { authorization: `Bearer ${settings.apiKey}` },
      signal: AbortSignal.timeout(MODEL_CHECK_MS),
    });
    if (response.status === 401 || response.status === 403) {
      return {
        name,
        ok: false,
        detail: `${endpoint} refuses the key (HTTP ${response.status} for GET /models): set OPENAI_API_KEY to a key it takes.`,
      };
    }
    return {
      name,
      ok: true,
      detail: `${describeModel(settings)} answers (HTTP ${response.status} for GET /models)`,
    };
  } catch (error) {
    const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
    return {
      name,
      ok: false,
      detail: `nothing answers at ${endpoint} (${describeThrown(cause)}). Start the model server, or set OPENAI_BASE_URL (and OPENAI_API_KEY, YIEM_MODEL) to one that runs.`,
    };
  }
}
