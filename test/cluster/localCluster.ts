import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { ensureTemporalCli, waitForServer } from '../../src/infrastructure/server/index.ts';
import { startPrivatePostgres } from './postgres.ts';
import { startTcpProxy } from './tcpProxy.ts';
import { nodePorts, type TemporalNode, temporalNode } from './temporalNode.ts';

const run = promisify(execFile);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const NODE_READY_TIMEOUT_MS = 90_000;
/** Up to how long shards may take to settle: a SIGKILLed node is only declared dead after a few seconds. */
const SHARD_SETTLE_TIMEOUT_MS = 90_000;
const SHARD_POLL_MS = 100;

/** The compose stack's set-up files, which this cluster uses too (test/deploy/compose.test.ts checks it). */
export const SHARED_SETUP = {
  schemaScript: 'deploy/temporal/setup-schema.sh',
  namespaceScript: 'deploy/temporal/setup-namespace.sh',
  dynamicConfigFile: 'deploy/temporal/dynamicconfig/yiem.yaml',
} as const;

/** What deploy/cluster/install.sh found or installed. */
export interface ClusterTools {
  TEMPORAL_SERVER_BIN: string;
  TEMPORAL_SQL_TOOL: string;
  TEMPORAL_SCHEMA_DIR: string;
  PG_BIN_DIR: string;
}

export async function installClusterTools(): Promise<ClusterTools> {
  const { stdout } = await run('bash', [path.join(ROOT, 'deploy/cluster/install.sh')], {
    maxBuffer: 16 * 1024 * 1024,
  });
  return Object.fromEntries(
    stdout
      .trim()
      .split('\n')
      .map((line) => [line.slice(0, line.indexOf('=')), line.slice(line.indexOf('=') + 1)]),
  ) as unknown as ClusterTools;
}

export interface LocalClusterOptions {
  /**
   * Ports: PostgreSQL at base+432, the proxy at base+233, node N at base+N*1000+(233…939). Shards
   * go to nodes by a hash ring over their addresses, so the ports decide the split (with the default,
   * 20100, two nodes own two of 4 shards each); tests ask the nodes who owns what instead of relying on it.
   */
  portBase?: number;
  nodes?: number;
  numHistoryShards?: number;
}

/** Temporal nodes on one PostgreSQL database, behind a TCP proxy whose address clients use. */
export interface LocalCluster {
  /** The proxy: it sends each connection to the first node whose frontend answers. */
  address: string;
  nodes: TemporalNode[];
  /** Starts a stopped or killed node again and waits until its frontend answers. */
  restart(node: TemporalNode): Promise<void>;
  numHistoryShards: number;
  /**
   * Waits until the running nodes have settled the shards among them: each owns at least one, and
   * each shard has exactly one owner. Returns each running node's shards.
   */
  waitForShardSplit(): Promise<Map<TemporalNode, number[]>>;
  /** Waits until `node` owns every shard; returns when it was first seen to (epoch ms, polled every 100 ms). */
  waitForAllShards(node: TemporalNode): Promise<number>;
  close(): Promise<void>;
}

/**
 * The cluster of the compose stack, from binaries: the same schema steps, dynamic config and
 * namespace set-up ({@link SHARED_SETUP}), with several nodes instead of one.
 */
export async function startLocalCluster(options: LocalClusterOptions = {}): Promise<LocalCluster> {
  const base = options.portBase ?? 20_100;
  const numHistoryShards = options.numHistoryShards ?? 4;
  const tools = await installClusterTools();
  const cliPath = await ensureTemporalCli();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-cluster-'));
  // PostgreSQL may run as another user, who must reach its directory.
  await chmod(dir, 0o755);
  const pgDir = path.join(dir, 'postgres');
  await mkdir(pgDir);
  const cleanups: (() => Promise<void>)[] = [() => rm(dir, { recursive: true, force: true })];
  const close = async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => undefined);
  };
  try {
    const postgres = await startPrivatePostgres(tools.PG_BIN_DIR, pgDir, base + 432);
    cleanups.push(() => postgres.stop());
    await run('sh', [path.join(ROOT, SHARED_SETUP.schemaScript)], {
      env: {
        ...process.env,
        POSTGRES_HOST: '127.0.0.1',
        POSTGRES_PORT: String(postgres.port),
        POSTGRES_USER: postgres.user,
        SQL_PASSWORD: '',
        TEMPORAL_SQL_TOOL: tools.TEMPORAL_SQL_TOOL,
        TEMPORAL_SCHEMA_DIR: tools.TEMPORAL_SCHEMA_DIR,
      },
    });
    const proxyPort = base + 233;
    const nodes = Array.from({ length: options.nodes ?? 2 }, (_, index) =>
      temporalNode(tools.TEMPORAL_SERVER_BIN, dir, `node${index + 1}`, {
        ports: nodePorts(base, index + 1),
        postgresPort: postgres.port,
        postgresUser: postgres.user,
        numHistoryShards,
        dynamicConfigFile: path.join(ROOT, SHARED_SETUP.dynamicConfigFile),
        clusterAddress: `127.0.0.1:${proxyPort}`,
      }),
    );
    cleanups.push(async () => {
      await Promise.all(nodes.map((node) => node.stop()));
    });
    const proxy = await startTcpProxy(
      proxyPort,
      nodes.map((node) => node.ports.frontend),
    );
    cleanups.push(() => proxy.close());
    const startNode = async (node: TemporalNode) => {
      await node.start();
      await waitForServer(`127.0.0.1:${node.ports.frontend}`, NODE_READY_TIMEOUT_MS, {
        namespace: 'temporal-system',
      }).catch((error: Error) => {
        throw new Error(`${node.name} did not come up (log: ${node.logFile}): ${error.message}`);
      });
    };
    // One after the other: two nodes starting at once on a fresh database race to write the cluster metadata.
    for (const node of nodes) await startNode(node);
    await run('sh', [path.join(ROOT, SHARED_SETUP.namespaceScript)], {
      env: {
        ...process.env,
        TEMPORAL_CLI: cliPath,
        TEMPORAL_ADDRESS: proxy.address,
        TEMPORAL_NAMESPACE: 'default',
        TEMPORAL_RETENTION: '1d',
      },
    });
    for (const node of nodes) {
      await waitForServer(`127.0.0.1:${node.ports.frontend}`, NODE_READY_TIMEOUT_MS);
    }
    /**
     * Polls `settled`, which throws saying what it saw until things are as it wants, until it returns;
     * the timeout's error names `what` and the last thing seen.
     */
    const waitUntil = async <T>(what: string, settled: () => Promise<T>): Promise<T> => {
      const deadline = Date.now() + SHARD_SETTLE_TIMEOUT_MS;
      for (;;) {
        try {
          return await settled();
        } catch (error) {
          if (Date.now() > deadline) {
            const logs = nodes.map((node) => node.logFile).join(', ');
            throw new Error(
              `${what} within ${SHARD_SETTLE_TIMEOUT_MS} ms (${(error as Error).message}; logs: ${logs})`,
            );
          }
        }
        await new Promise((resolve) => setTimeout(resolve, SHARD_POLL_MS));
      }
    };
    const waitForShardSplit = () =>
      waitUntil('the running nodes did not split the history shards among them', async () => {
        const running = nodes.filter((node) => node.running);
        const owners = new Map(
          await Promise.all(running.map(async (node) => [node, await node.ownedShards()] as const)),
        );
        const owned = [...owners.values()].flat().sort((a, b) => a - b);
        const description = running.map((node) => `${node.name} owns [${owners.get(node)?.join(', ')}]`);
        const everyShardOnce =
          owned.length === numHistoryShards && owned.every((shard, i) => shard === i + 1);
        if (everyShardOnce && [...owners.values()].every((shards) => shards.length > 0)) return owners;
        throw new Error(description.join(', '));
      });
    const waitForAllShards = (node: TemporalNode) =>
      waitUntil(`${node.name} did not take over every history shard`, async () => {
        const shards = await node.ownedShards();
        if (shards.length === numHistoryShards) return Date.now();
        throw new Error(`${node.name} owns [${shards.join(', ')}]`);
      });
    return {
      address: proxy.address,
      nodes,
      numHistoryShards,
      restart: startNode,
      waitForShardSplit,
      waitForAllShards,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
