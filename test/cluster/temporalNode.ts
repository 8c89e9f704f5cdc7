import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { ownedShards } from './shardOwnership.ts';

/** Ports of one node; membership ports stay below 32768, the stock PostgreSQL schema stores them as SMALLINT. */
export interface NodePorts {
  frontend: number;
  frontendHttp: number;
  history: number;
  matching: number;
  worker: number;
  membership: { frontend: number; history: number; matching: number; worker: number };
}

/** The ports of node `index` (1, 2, ...): a block of 1000 from `base`. */
export function nodePorts(base: number, index: number): NodePorts {
  const start = base + index * 1000;
  return {
    frontend: start + 233,
    frontendHttp: start + 243,
    history: start + 234,
    matching: start + 235,
    worker: start + 239,
    membership: { frontend: start + 933, history: start + 934, matching: start + 935, worker: start + 939 },
  };
}

export interface NodeConfig {
  ports: NodePorts;
  postgresPort: number;
  postgresUser: string;
  numHistoryShards: number;
  dynamicConfigFile: string;
  /** The address every node records for the cluster (the load balancer in front of the frontends). */
  clusterAddress: string;
}

/** The server's YAML config: all services in one process, membership on loopback. */
export function nodeConfigYaml(config: NodeConfig): string {
  const { ports } = config;
  const store = (database: string, maxConns: number) => `
      sql:
        pluginName: postgres12
        databaseName: ${database}
        connectAddr: 127.0.0.1:${config.postgresPort}
        connectProtocol: tcp
        user: ${config.postgresUser}
        password: ""
        maxConns: ${maxConns}
        maxIdleConns: ${maxConns}
        maxConnLifetime: 1h`;
  const service = (grpc: number, membership: number, http?: number) => `
    rpc:
      grpcPort: ${grpc}
      membershipPort: ${membership}
      bindOnIP: 127.0.0.1${http ? `\n      httpPort: ${http}` : ''}`;
  return `log:
  stdout: true
  level: info
persistence:
  defaultStore: default
  visibilityStore: visibility
  numHistoryShards: ${config.numHistoryShards}
  datastores:
    default:${store('temporal', 20)}
    visibility:${store('temporal_visibility', 5)}
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
services:
  frontend:${service(ports.frontend, ports.membership.frontend, ports.frontendHttp)}
  history:${service(ports.history, ports.membership.history)}
  matching:${service(ports.matching, ports.membership.matching)}
  worker:${service(ports.worker, ports.membership.worker)}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: ${config.clusterAddress}
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: ${config.dynamicConfigFile}
  pollInterval: 10s
`;
}

/** One `server start` process running every service. */
export interface TemporalNode {
  name: string;
  ports: NodePorts;
  logFile: string;
  readonly process: ChildProcess | undefined;
  /** Started and not exited. */
  readonly running: boolean;
  start(): Promise<void>;
  /** SIGKILL: the node vanishes without handing anything over. Returns when it has exited. */
  kill(): Promise<number>;
  stop(): Promise<void>;
  /** The history shards this node holds now, as its history service answers. */
  ownedShards(): Promise<number[]>;
}

export function temporalNode(serverBin: string, dir: string, name: string, config: NodeConfig): TemporalNode {
  const configFile = path.join(dir, `${name}.yaml`);
  const logFile = path.join(dir, `${name}.log`);
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  const node: TemporalNode = {
    name,
    ports: config.ports,
    logFile,
    get process() {
      return child;
    },
    get running() {
      return child !== undefined && child.exitCode === null && child.signalCode === null;
    },
    async start() {
      await writeFile(configFile, nodeConfigYaml(config));
      // The node writes its own log: two pipes into one stream would end it when the first closes, and the
      // second's last lines would then throw "write after end" in the test process.
      const log = openSync(logFile, 'a');
      const started = spawn(serverBin, ['--config-file', configFile, '--allow-no-auth', 'start'], {
        stdio: ['ignore', log, log],
      });
      closeSync(log);
      child = started;
      exited = new Promise((resolve) => started.once('exit', () => resolve()));
    },
    async kill() {
      const killedAt = Date.now();
      child?.kill('SIGKILL');
      await exited;
      return killedAt;
    },
    async stop() {
      if (!node.running) return;
      child?.kill('SIGTERM');
      const timer = setTimeout(() => child?.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    },
    ownedShards() {
      return ownedShards(`127.0.0.1:${config.ports.history}`);
    },
  };
  return node;
}
