import type { WorkerDeploymentOptions } from '@temporalio/worker';

/** A worker's place in a Temporal Worker Deployment: which deployment, and which build of it. */
export interface WorkerDeploymentSettings {
  /** The Worker Deployment's name (one per agent service, e.g. `support-agent`). */
  name: string;
  /** This build's id (a git sha, an image tag): a new one for every deploy of changed code. */
  buildId: string;
}

/**
 * The Temporal options of a versioned worker, from `deployment` or env `YIEM_DEPLOYMENT_NAME` and
 * `YIEM_BUILD_ID` (both, or neither: unversioned). Conversations are Pinned: a run stays on the build
 * it started on, so no turn ever replays on other code; between turns it continues as new onto the
 * deployment's current version (workflows/versionUpgrade.ts).
 */
export function workerDeploymentOptions(
  deployment: WorkerDeploymentSettings | undefined,
  env: NodeJS.ProcessEnv,
): WorkerDeploymentOptions | undefined {
  const name = deployment?.name ?? env.YIEM_DEPLOYMENT_NAME;
  const buildId = deployment?.buildId ?? env.YIEM_BUILD_ID;
  if (!name && !buildId) return undefined;
  if (!name || !buildId) {
    throw new Error(
      `A versioned worker needs both a deployment name and a build id (YIEM_DEPLOYMENT_NAME and YIEM_BUILD_ID, or --deployment-name and --build-id); only the ${name ? 'deployment name' : 'build id'} is set`,
    );
  }
  return {
    version: { deploymentName: name, buildId },
    useWorkerVersioning: true,
    defaultVersioningBehavior: 'PINNED',
  };
}
