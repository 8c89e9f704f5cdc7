import { describe, expect, it } from 'vitest';
import { ToolRegistry } from '../../activities/registry/registry.ts';
import { nexusTool } from '../../src/contract/nexusTools.ts';

const spec = {
  name: 'lookUpOrder',
  description: "Looks up an order's status",
  inputSchema: { type: 'object' },
  endpoint: 'orders',
  service: 'orders',
  operation: 'lookUpOrder',
};

describe('nexusTool', () => {
  it('declares a Nexus runner, registers like any tool and has no execute', () => {
    const tool = nexusTool({ ...spec, requiresApproval: true, scheduleToCloseTimeout: '1 minute' });
    expect(tool).toMatchObject({
      name: 'lookUpOrder',
      label: 'orders.lookUpOrder (Nexus)',
      parallelToolExecute: true,
      requiresApproval: true,
      runner: {
        kind: 'nexus',
        endpoint: 'orders',
        service: 'orders',
        operation: 'lookUpOrder',
        scheduleToCloseTimeout: '1 minute',
      },
    });
    expect(tool).not.toHaveProperty('execute');
    const registry = new ToolRegistry();
    registry.registerTool(tool);
    expect(registry.get('lookUpOrder')?.runner).toEqual(tool.runner);
  });

  it('refuses a tool without an endpoint, service or operation', () => {
    expect(() => nexusTool({ ...spec, endpoint: ' ' })).toThrow(
      'Nexus tool "lookUpOrder" needs a non-empty endpoint',
    );
    expect(() => nexusTool({ ...spec, operation: '' })).toThrow(
      'Nexus tool "lookUpOrder" needs a non-empty operation',
    );
  });
});
