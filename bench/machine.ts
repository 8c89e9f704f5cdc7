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
