import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import type { WorkerOptions } from '@temporalio/worker';
import { packageVersion } from '../infrastructure/packageVersion.ts';
import type { WorkflowBundle } from './options.ts';
import { AGENT_WORKFLOWS_PATH } from './plugin.ts';

/**
 * The `buildId` option of a worker without yiem's deployment: {@link workflowBuildId}, unless
 * Temporal's own options in `temporalOptions` name the build (versioning, or a build id of its own).
 */
export async function unversionedBuildId(
  bundle: WorkflowBundle | undefined,
  temporalOptions: Partial<WorkerOptions> | undefined,
): Promise<{ buildId?: string }> {
  if (temporalOptions?.workerDeploymentOptions || temporalOptions?.buildId) return {};
  const sources = { agentWorkflowsPath: AGENT_WORKFLOWS_PATH, workflowsPath: temporalOptions?.workflowsPath };
  return { buildId: await workflowBuildId(bundle, sources) };
}

/**
 * The build id of a worker without a deployment: `yiem-agent@<version>+<12 hex digits>`, a hash of
 * its workflow code: the prebuilt bundle, or what the worker bundles (the workflow folder, the
 * contract it imports, a `workflowsPath` of the user's, and the Temporal SDK's version). Temporal's
 * default, the SDK's name and a 64-digit hash of the bundle, is written into three events of every
 * workflow task and activity: about 75 bytes more each, some 400 bytes a turn.
 */
export async function workflowBuildId(
  bundle: WorkflowBundle | undefined,
  sources: { agentWorkflowsPath: string; workflowsPath?: string | undefined },
): Promise<string> {
  const hash = createHash('sha256');
  if (bundle) {
    hash.update(bundle.code);
  } else {
    const root = path.dirname(path.dirname(sources.agentWorkflowsPath));
    const files = [
      ...(await filesUnder(path.join(root, 'workflows'))),
      ...(await filesUnder(path.join(root, 'src', 'contract'))),
      ...(sources.workflowsPath ? [path.resolve(sources.workflowsPath)] : []),
    ];
    hash.update(temporalSdkVersion());
    for (const file of files) hash.update(`\0${path.relative(root, file)}\0`).update(await readFile(file));
  }
  return `yiem-agent@${packageVersion()}+${hash.digest('hex').slice(0, 12)}`;
}

async function filesUnder(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true }).catch(() => []);
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.join(entry.parentPath, entry.name))
    .sort();
}

function temporalSdkVersion(): string {
  const manifest = createRequire(import.meta.url)('@temporalio/workflow/package.json') as { version: string };
  return manifest.version;
}
