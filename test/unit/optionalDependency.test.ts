import { expect, it } from 'vitest';
import { requireOptional } from '../../src/infrastructure/optionalDependency.ts';

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
