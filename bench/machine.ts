import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';

export interface MachineInfo {
  cpuModel: string;
  cores: number;
  memoryGb: number;
  node: string;
  os: string;
  loadBefore: number[];
  loadAfter: number[];
}

export function machineInfo(): Omit<MachineInfo, 'loadAfter'> {
  return {
    cpuModel: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGb: os.totalmem() / 1024 ** 3,
    node: process.version,
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    loadBefore: os.loadavg(),
  };
}

/** Linux reports CPU times in clock ticks of 10 ms (USER_HZ 100). */
const TICK_MS = 10;

/** The fields of /proc/<pid>/stat after the command name, or none once the process has gone. */
function statFields(pid: number | 'self'): string[] {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  } catch {
    return [];
  }
}

/** User + system CPU time of a process in ms, from /proc (0 once it has gone). */
export function processCpuMs(pid: number): number {
  const fields = statFields(pid);
  return (Number(fields[11] ?? 0) + Number(fields[12] ?? 0)) * TICK_MS;
}

/**
 * CPU of every process the bench process started but `except`, ms: the live ones read from /proc
 * (with their own reaped children) plus the bench process's reaped children (cutime + cstime), so
 * a worker process that exits during a section still counts.
 */
function childrenCpuMs(except: number): number {
  const self = statFields('self');
  let total = (Number(self[13] ?? 0) + Number(self[14] ?? 0)) * TICK_MS;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid) || pid === except) continue;
    const fields = statFields(pid);
    if (Number(fields[1]) !== process.pid) continue;
    total += (Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14])) * TICK_MS;
  }
  return total;
}

/** CPU time the whole machine spent busy (all processes, all cores), ms, from /proc/stat. */
function machineBusyMs(): number {
  const [, user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0] = (
    readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? ''
  )
    .split(/\s+/)
    .map(Number);
  return (user + nice + system + irq + softirq) * TICK_MS;
}

/** The machine's load and the CPU each of the bench's processes used while one section ran. */
export interface SectionLoad {
  seconds: number;
  /** 1, 5 and 15 min load averages. */
  loadBefore: number[];
  loadAfter: number[];
  /** User + system CPU during the section, ms. */
  cpuMs: {
    server: number;
    /** Every other process the bench started: the worker processes (and their MCP servers). */
    workers: number;
    /** The bench process: the driver, the scripted model server and any in-process worker. */
    driver: number;
    /** Everything else on the machine: other people's work. */
    others: number;
  };
}

/** Starts reading a section's load; `stop()` when the section has measured. */
export function startSectionMeter(serverPid: number): { stop(): SectionLoad } {
  const start = {
    at: performance.now(),
    load: os.loadavg(),
    server: processCpuMs(serverPid),
    workers: childrenCpuMs(serverPid),
    driver: process.cpuUsage(),
    machine: machineBusyMs(),
  };
  return {
    stop() {
      const driverUsage = process.cpuUsage(start.driver);
      const cpuMs = {
        server: processCpuMs(serverPid) - start.server,
        workers: childrenCpuMs(serverPid) - start.workers,
        driver: (driverUsage.user + driverUsage.system) / 1000,
      };
      const machine = machineBusyMs() - start.machine;
      return {
        seconds: (performance.now() - start.at) / 1000,
        loadBefore: start.load,
        loadAfter: os.loadavg(),
        cpuMs: { ...cpuMs, others: Math.max(0, machine - cpuMs.server - cpuMs.workers - cpuMs.driver) },
      };
    },
  };
}
