import { describe, expect, it } from 'vitest';
import type { PreparedToolCall } from '../../src/contract/protocol.ts';
import { DEFAULT_TOOL_POLICY } from '../../src/contract/toolPolicy.ts';
import { planExecutionGroups } from '../../workflows/toolBatch.ts';

let counter = 0;

/** A call ready to run; `parallel` is the tool's `parallelToolExecute`. */
function ready(parallel: boolean): PreparedToolCall {
  counter += 1;
  return {
    kind: 'ready',
    toolCallId: `call_${counter}`,
    toolName: parallel ? 'parallelTool' : 'serialTool',
    args: {},
    parallel,
    policy: DEFAULT_TOOL_POLICY,
    summary: 'tool()',
  };
}

/** A call PREPARE already answered (unknown tool, invalid arguments, blocked). */
function immediate(): PreparedToolCall {
  counter += 1;
  return {
    kind: 'immediate',
    message: {
      role: 'toolResult',
      toolCallId: `call_${counter}`,
      toolName: 'missing',
      content: [{ type: 'text', text: 'Tool "missing" not found' }],
      details: {},
      isError: true,
      timestamp: 0,
    },
  };
}

const P = (): PreparedToolCall => ready(true);
const S = (): PreparedToolCall => ready(false);
const I = immediate;

describe('planExecutionGroups', () => {
  it('returns no groups for an empty batch', () => {
    expect(planExecutionGroups([], 'parallel')).toEqual([]);
    expect(planExecutionGroups([], 'sequential')).toEqual([]);
  });

  describe('sequential mode', () => {
    it('runs every ready call alone, in order, even parallel-capable ones', () => {
      expect(planExecutionGroups([P(), P(), S(), P()], 'sequential')).toEqual([[0], [1], [2], [3]]);
    });

    it('skips calls already answered in PREPARE', () => {
      expect(planExecutionGroups([I(), P(), I(), S()], 'sequential')).toEqual([[1], [3]]);
    });
  });

  describe('parallel mode', () => {
    it('starts all parallel calls together', () => {
      expect(planExecutionGroups([P(), P(), P()], 'parallel')).toEqual([[0, 1, 2]]);
    });

    it('runs a non-parallel call alone in its place, splitting the groups around it', () => {
      expect(planExecutionGroups([P(), P(), S(), P()], 'parallel')).toEqual([[0, 1], [2], [3]]);
      expect(planExecutionGroups([S(), P(), P(), S(), S()], 'parallel')).toEqual([[0], [1, 2], [3], [4]]);
    });

    it('runs only non-parallel calls one by one', () => {
      expect(planExecutionGroups([S(), S()], 'parallel')).toEqual([[0], [1]]);
    });

    it('leaves answered calls out without splitting a parallel group', () => {
      expect(planExecutionGroups([P(), I(), P(), S(), I()], 'parallel')).toEqual([[0, 2], [3]]);
    });

    it('plans nothing when every call was answered in PREPARE', () => {
      expect(planExecutionGroups([I(), I()], 'parallel')).toEqual([]);
    });
  });

  it('covers every ready call exactly once', () => {
    const batch = [P(), S(), I(), P(), P(), S(), I(), P()];
    for (const mode of ['parallel', 'sequential'] as const) {
      const indices = planExecutionGroups(batch, mode).flat();
      const readyIndices = batch.flatMap((call, index) => (call.kind === 'ready' ? [index] : []));
      expect(indices).toEqual(readyIndices);
    }
  });
});
