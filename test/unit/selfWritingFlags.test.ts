import { describe, expect, it } from 'vitest';
import { selfWritingConfig } from '../../src/cli/selfWritingFlags.ts';

describe('yiem worker --allow-write-tools and --sandbox-* flags', () => {
  it('leave writeTool off without --allow-write-tools', () => {
    expect(selfWritingConfig({})).toBeUndefined();
  });

  it('turn writeTool on with the sandbox limits given', () => {
    expect(
      selfWritingConfig({
        allowWriteTools: './written',
        sandboxTimeout: '2000',
        sandboxMemory: '32',
        sandboxRead: ['./data'],
        sandboxNetwork: true,
      }),
    ).toEqual({
      toolsDir: './written',
      timeoutMs: 2000,
      memoryMb: 32,
      fsAllowlist: ['./data'],
      allowNetwork: true,
    });
  });

  it('refuse sandbox flags without --allow-write-tools, and limits that are not positive numbers', () => {
    expect(() => selfWritingConfig({ sandboxNetwork: true })).toThrow(
      'The --sandbox-* flags apply to written tools: add --allow-write-tools DIR',
    );
    expect(() => selfWritingConfig({ allowWriteTools: 'dir', sandboxTimeout: 'soon' })).toThrow(
      '--sandbox-timeout must be a positive number, got "soon"',
    );
  });
});
