import { ServiceError } from '@temporalio/client';
import { describe, expect, inject, it } from 'vitest';
import { AgentClient } from '../../src/client/client.ts';
import { closedPort } from '../support/ports.ts';

describe('a client whose Temporal address is wrong', () => {
  it('fails its first call naming the address and the refused connection', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const client = new AgentClient({ address, taskQueue: 'nowhere' });
    try {
      const starting = client.startConversation({ systemPrompt: '' });
      await expect(starting).rejects.toBeInstanceOf(ServiceError);
      await expect(starting).rejects.toThrow(`Temporal at ${address} is unreachable (`);
      await expect(starting).rejects.toThrow('ECONNREFUSED');
    } finally {
      await client.close();
    }
  });

  it('fails a listing the same way', async () => {
    const address = `127.0.0.1:${await closedPort()}`;
    const client = new AgentClient({ address });
    try {
      await expect(client.listConversations()).rejects.toThrow(`Temporal at ${address} is unreachable (`);
    } finally {
      await client.close();
    }
  });

  it('still reaches a server at the right address', async () => {
    // No worker polls 'nowhere': a start there is checked for one unless told not to.
    const client = new AgentClient({
      address: inject('temporalAddress'),
      taskQueue: 'nowhere',
      checkWorkers: false,
    });
    try {
      const conversation = await client.startConversation({ systemPrompt: '' });
      expect((await conversation.handle.describe()).status.name).toBe('RUNNING');
      await conversation.handle.terminate('test done');
    } finally {
      await client.close();
    }
  });
});
