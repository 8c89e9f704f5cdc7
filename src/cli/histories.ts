import { exportHistories } from '../client/exportHistories.ts';
import { dataConverterFromEnv } from '../infrastructure/codec/dataConverter.ts';
import { connectedClient } from './commands.ts';
import { type ConnectionFlags, connectionConfig } from './config.ts';
import { cliEnvironment } from './environment.ts';

/** `yiem export-histories`: one JSON file per conversation run, for `yiem replay-check`. */
export async function exportHistoriesCommand(
  dir: string,
  flags: ConnectionFlags & { query?: string; limit: string },
): Promise<void> {
  if (!/^\d+$/.test(flags.limit) || Number(flags.limit) < 1) {
    throw new Error(`--limit ${flags.limit}: expected a whole number above 0`);
  }
  const client = await connectedClient(connectionConfig(flags));
  try {
    const exported = await exportHistories(client.client, dir, {
      ...(flags.query ? { query: flags.query } : {}),
      limit: Number(flags.limit),
    });
    for (const run of exported) console.log(`${run.file} (${run.events} events)`);
    console.log(`Exported ${exported.length} run(s) to ${dir}.`);
  } finally {
    await client.close();
  }
}

/**
 * `yiem replay-check`: replays every history in a folder against this code; exits 1 naming each
 * conversation, run and event that no longer replays.
 */
export async function replayCheckCommand(dir: string, flags: { workflows?: string }): Promise<void> {
  const [{ DefaultLogger, Runtime }, { formatReplayFailure, replayCheck }] = await Promise.all([
    import('@temporalio/worker'),
    import('../worker/replayCheck.ts'),
  ]);
  // Each failure is reported once below; the SDK would also log every failed replay task.
  Runtime.install({
    logger: new DefaultLogger('ERROR', () => undefined),
    telemetryOptions: { logging: { filter: { core: 'ERROR', other: 'ERROR' } } },
  });
  const dataConverter = dataConverterFromEnv(cliEnvironment());
  const report = await replayCheck(dir, {
    ...(flags.workflows ? { workflowsPath: flags.workflows } : {}),
    ...(dataConverter ? { dataConverter } : {}),
  });
  for (const failure of report.failures) console.log(formatReplayFailure(failure));
  const passed = report.checked - report.failures.length;
  console.log(`Replayed ${report.checked} histories: ${passed} passed, ${report.failures.length} failed.`);
  if (report.failures.length > 0) process.exitCode = 1;
}
