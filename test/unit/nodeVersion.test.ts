import { expect, it } from 'vitest';
import { unsupportedNodeProblem } from '../../src/infrastructure/nodeVersion.ts';

it('accepts Node 22.12 and later, and Node 24 and later', () => {
  for (const version of ['22.12.0', '22.23.5', '24.0.0', '24.22.3', '26.1.0']) {
    expect(unsupportedNodeProblem(version)).toBeUndefined();
  }
});

it('refuses Node 20 and early Node 22, naming the Node it found and what to install', () => {
  expect(unsupportedNodeProblem('20.20.2')).toBe(
    'yiem-agent needs Node.js 22.12 or later (Node 22 or 24 LTS); this is Node 20.20.2. ' +
      'Install Node 24 (https://nodejs.org, or nvm install 24) and run it again.',
  );
  expect(unsupportedNodeProblem('22.11.0')).toContain('this is Node 22.11.0');
  expect(unsupportedNodeProblem('18.19.1')).toContain('this is Node 18.19.1');
});
