import { describe, expect, it } from 'vitest';
import { workerDeploymentOptions } from '../../src/worker/deployment.ts';

describe('a worker in a Worker Deployment', () => {
  it('is unversioned unless given a deployment, and Pinned when it is', () => {
    expect(workerDeploymentOptions(undefined, {})).toBeUndefined();
    expect(workerDeploymentOptions({ name: 'support', buildId: 'abc123' }, {})).toEqual({
      version: { deploymentName: 'support', buildId: 'abc123' },
      useWorkerVersioning: true,
      defaultVersioningBehavior: 'PINNED',
    });
  });

  it('reads YIEM_DEPLOYMENT_NAME and YIEM_BUILD_ID', () => {
    expect(
      workerDeploymentOptions(undefined, { YIEM_DEPLOYMENT_NAME: 'support', YIEM_BUILD_ID: 'v7' })?.version,
    ).toEqual({ deploymentName: 'support', buildId: 'v7' });
  });

  it('refuses half a version, naming what is missing', () => {
    expect(() => workerDeploymentOptions(undefined, { YIEM_BUILD_ID: 'v7' })).toThrow(
      /needs both a deployment name and a build id .*only the build id is set/,
    );
    expect(() => workerDeploymentOptions({ name: 'support', buildId: '' }, {})).toThrow(
      /only the deployment name is set/,
    );
  });
});
