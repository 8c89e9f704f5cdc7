import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';
import { ensureTemporalCli, startDevServer, waitForServer } from '../../src/infrastructure/server/index.ts';
import { killLeftoverProcesses, markTestRun } from './leftoverProcesses.ts';

const EXTERNAL_SERVER_TIMEOUT_MS = 10_000;

/**
 * Starts one headless Temporal dev server for the whole test run and provides its address as
 * `inject('temporalAddress')`. With `YIEM_TEST_TEMPORAL_ADDRESS` set, uses that server instead. At the
 * end, the run fails if any process it started is still running.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = markTestRun();
  const teardown = await startServer(project);
  return async () => {
    await teardown();
    const left = await killLeftoverProcesses(runId);
    if (left.length > 0) {
      const list = left.map(({ pid, command }) => `  ${pid} ${command}`).join('\n');
      throw new Error(`The tests left ${left.length} process(es) running (now killed):\n${list}`);
    }
    console.log('Leftover processes: 0 (every server, worker and browser the tests started has exited)');
  };
}

async function startServer(project: TestProject): Promise<() => Promise<void>> {
  // Workers and clients that take the payload store from the environment share a throwaway one.
  const payloadsDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-test-payloads-'));
  process.env.YIEM_PAYLOADS_DIR ??= payloadsDir;
  const removePayloads = () => rm(payloadsDir, { recursive: true, force: true });
  const external = process.env.YIEM_TEST_TEMPORAL_ADDRESS;
  if (external) {
    await waitForServer(external, EXTERNAL_SERVER_TIMEOUT_MS).catch((error: Error) => {
      throw new Error(`YIEM_TEST_TEMPORAL_ADDRESS=${external}: ${error.message}`);
    });
    project.provide('temporalAddress', external);
    return removePayloads;
  }

  // The CLI lives in the project's data dir (not the throwaway one) so it is installed once, not per run.
  const cliPath = await ensureTemporalCli();
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'yiem-test-'));
  const server = await startDevServer({ dataDir, cliPath, port: 0, headless: true }).catch(async (error) => {
    await rm(dataDir, { recursive: true, force: true });
    throw error;
  });
  project.provide('temporalAddress', server.address);

  return async () => {
    await server.stop();
    await rm(dataDir, { recursive: true, force: true });
    await removePayloads();
  };
}
