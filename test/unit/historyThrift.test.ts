import { describe, expect, it } from 'vitest';
import type { PreparedToolCall } from '../../src/contract/protocol.ts';
import { resolveToolPolicy, withDefaultPolicy, withoutDefaultPolicy } from '../../src/contract/toolPolicy.ts';
import {
  announcementOf,
  identityWithStore,
  isStore,
} from '../../src/infrastructure/storage/payloadStoreIdentity.ts';
import { workflowBuildId } from '../../src/worker/buildId.ts';
import { AGENT_WORKFLOWS_PATH } from '../../src/worker/plugin.ts';

// What keeps a turn's history small: each of these is written into the history of every turn.

const ready = (policy = resolveToolPolicy()): PreparedToolCall => ({
  kind: 'ready',
  toolCallId: 'call_1',
  toolName: 'noop',
  args: {},
  parallel: true,
  policy,
  summary: 'noop()',
});

describe("a prepared call's policy in the model call's result", () => {
  it('is left out when it is the default, and comes back as the default', () => {
    const sent = withoutDefaultPolicy(ready());
    expect(sent).not.toHaveProperty('policy');
    expect(withDefaultPolicy(sent)).toEqual(ready());
  });

  it("stays when the tool has its own, and a local tool's default is its own default", () => {
    const own = ready(resolveToolPolicy({ startToCloseTimeout: '1 minute' }));
    expect(withoutDefaultPolicy(own)).toEqual(own);
    const local = { ...ready(resolveToolPolicy(undefined, true)), localActivity: true as const };
    expect(withDefaultPolicy(withoutDefaultPolicy(local))).toEqual(local);
  });
});

describe("a worker's announced store", () => {
  const store = { id: '0123456789abcdef', location: '/data/payloads' };

  it('is 8 digits of its id and no folder, and still matches the whole id', () => {
    const identity = identityWithStore('1@host', { store });
    expect(identity).toBe('1@host p(01234567)');
    expect(isStore(announcementOf(identity).store, store)).toBe(true);
    expect(isStore(announcementOf(identity).store, { ...store, id: 'fedcba9876543210' })).toBe(false);
  });

  it("reads an earlier release's long announcement", () => {
    const old = announcementOf('1@host codec(k1:9a3e01bc) payloads(0123456789abcdef /data/payloads) yiem(x)');
    expect(old).toEqual({ announced: true, store, codecKeys: ['k1:9a3e01bc'] });
    expect(announcementOf('1@host p(-) k(k1:9a3e01bc)')).toEqual({
      announced: true,
      codecKeys: ['k1:9a3e01bc'],
    });
  });
});

describe("a worker's build id", () => {
  it('is short and names the workflow code: another bundle, another id', async () => {
    const sources = { agentWorkflowsPath: AGENT_WORKFLOWS_PATH };
    const one = await workflowBuildId({ code: 'one' }, sources);
    expect(one).toMatch(/^yiem-agent@[^+]+\+[0-9a-f]{12}$/);
    expect(await workflowBuildId({ code: 'two' }, sources)).not.toBe(one);
    const fromSources = await workflowBuildId(undefined, sources);
    expect(fromSources).toMatch(/^yiem-agent@[^+]+\+[0-9a-f]{12}$/);
    expect(await workflowBuildId(undefined, sources)).toBe(fromSources);
  });
});
