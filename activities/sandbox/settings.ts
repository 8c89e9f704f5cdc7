import { realpathSync } from 'node:fs';
import { resolve } from 'node:path';
import type { SandboxOptions } from '../../src/contract/types/sandbox.ts';

/** The sandbox limits with every default filled in and allowlisted paths resolved. */
export interface SandboxSettings {
  timeoutMs: number;
  memoryMb: number;
  /** Real paths (symlinks resolved), so a link inside an allowed directory cannot point outside it. */
  fsAllowlist: string[];
  allowNetwork: boolean;
}

export const DEFAULT_SANDBOX_TIMEOUT_MS = 10_000;
export const DEFAULT_SANDBOX_MEMORY_MB = 64;
/** isolated-vm refuses smaller heaps. */
const MIN_MEMORY_MB = 8;

export function resolveSandboxSettings(options: SandboxOptions = {}): SandboxSettings {
  const timeoutMs = options.timeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS;
  const memoryMb = options.memoryMb ?? DEFAULT_SANDBOX_MEMORY_MB;
  if (!(timeoutMs > 0)) throw new Error(`Sandbox timeoutMs must be a positive number, got ${timeoutMs}`);
  if (!(memoryMb >= MIN_MEMORY_MB)) {
    throw new Error(`Sandbox memoryMb must be at least ${MIN_MEMORY_MB}, got ${memoryMb}`);
  }
  return {
    timeoutMs,
    memoryMb,
    fsAllowlist: (options.fsAllowlist ?? []).map(realPathOrResolved),
    allowNetwork: options.allowNetwork === true,
  };
}

/** An allowlisted path that does not exist yet is kept as given; reads of it fail until it does. */
function realPathOrResolved(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return resolve(path);
  }
}
