import { copyFile, mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, expect, it } from 'vitest';
import { OptionalDependencyError, requireOptional } from '../../src/infrastructure/optionalDependency.ts';

const NODE_MODULES = fileURLToPath(new URL('../../node_modules/', import.meta.url));
const WRONG_ABI = 'yiem-test-wrong-abi-addon';

afterAll(() => rm(path.join(NODE_MODULES, WRONG_ABI), { recursive: true, force: true }));

it('names the feature and what to install when a package a feature needs is missing', () => {
  expect(() =>
    requireOptional('yiem-no-such-package', 'Running written tools', 'yiem-no-such-package@1.0.0'),
  ).toThrow(
    'Running written tools needs the package yiem-no-such-package, which is not installed: npm install yiem-no-such-package@1.0.0',
  );
});

it('loads a package that is installed', () => {
  expect(requireOptional<{ Ajv: unknown }>('ajv', 'Validation').Ajv).toBeTypeOf('function');
});

// The failure Node 24 users met with isolated-vm 5: an addon built for another Node. Here the real
// isolated-vm addon of the other supported ABI (127 is Node 22, 137 is Node 24), in a package of its own.
it('names the package, this Node and its ABI, and the install command when a native addon was built for another Node', async () => {
  const otherAbi = process.versions.modules === '137' ? '127' : '137';
  const dir = path.join(NODE_MODULES, WRONG_ABI);
  await mkdir(dir, { recursive: true });
  await copyFile(
    path.join(NODE_MODULES, `isolated-vm/prebuilds/linux-x64/isolated-vm.abi${otherAbi}.glibc.node`),
    path.join(dir, 'addon.node'),
  );
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: WRONG_ABI, main: 'index.js' }));
  await writeFile(path.join(dir, 'index.js'), "module.exports = require('./addon.node');\n");

  let thrown: unknown;
  try {
    requireOptional(WRONG_ABI, 'Running written tools', `${WRONG_ABI}@6.2.0`);
  } catch (error) {
    thrown = error;
  }
  expect(thrown).toBeInstanceOf(OptionalDependencyError);
  const message = (thrown as Error).message;
  expect(message).toContain(
    `Running written tools needs the package ${WRONG_ABI}, whose native addon cannot load`,
  );
  expect(message).toContain(`on Node ${process.versions.node} (ABI ${process.versions.modules}, linux-x64)`);
  // What Node itself said: the addon's missing V8 symbol, or the ABI it was built for.
  expect(message).toMatch(/addon\.node'?:? (undefined symbol: \w+|.*NODE_MODULE_VERSION \d+)/);
  expect(message).toContain(`Install a build for this Node: npm install ${WRONG_ABI}@6.2.0`);
});
