import { access, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolResultMessage } from '../../src/contract/types/messages.ts';
import { startTestAgent, type TestAgent } from '../support/agentHarness.ts';

const TIME_LIMIT_MS = 1_500;
const MEMORY_LIMIT_MB = 32;

describe('written tools run in a sandbox, against a real Temporal server', () => {
  let root: string;
  let allowedDir: string;
  let agent: TestAgent;
  let toolCount = 0;

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'yiem-sandbox-'));
    allowedDir = join(root, 'allowed');
    agent = await startTestAgent({
      selfWriting: {
        toolsDir: join(root, 'tools'),
        timeoutMs: TIME_LIMIT_MS,
        memoryMb: MEMORY_LIMIT_MB,
        fsAllowlist: [allowedDir],
      },
    });
    await writeFile(join(root, 'outside.txt'), 'not for tools');
    await mkdir(allowedDir);
    await writeFile(join(allowedDir, 'wines.csv'), 'Barolo,Piedmont\n');
    await symlink('/etc/passwd', join(allowedDir, 'passwd-link'));
  });
  afterAll(async () => {
    await agent?.close();
    await rm(root, { recursive: true, force: true });
  });

  /**
   * One conversation: the model writes a tool with `code`, calls it, then calls `ping` (a second
   * written tool) to show the worker still runs tools, and answers. Returns the three tool results.
   */
  async function writeAndRun(
    code: string,
  ): Promise<{ written: ToolResultMessage; ran: ToolResultMessage; next: ToolResultMessage }> {
    toolCount += 1;
    const name = `sandboxed${toolCount}`;
    const ping = `ping${toolCount}`;
    const tool = (toolName: string, executeCode: string) => ({
      name: toolName,
      label: toolName,
      description: 'a sandbox test',
      inputSchema: { type: 'object', properties: {} },
      executeCode,
    });
    agent.model.reset();
    agent.model.enqueue(
      {
        kind: 'toolCalls',
        toolCalls: [
          { id: 'write', name: 'writeTool', arguments: tool(name, code) },
          { id: 'write_ping', name: 'writeTool', arguments: tool(ping, 'return textResult("pong");') },
        ],
      },
      { kind: 'toolCalls', toolCalls: [{ id: 'run', name, arguments: {} }] },
      { kind: 'toolCalls', toolCalls: [{ id: 'ping', name: ping, arguments: {} }] },
      { kind: 'text', text: 'done' },
    );
    const conversation = await agent.client.startConversation({ systemPrompt: '' });
    const result = await conversation.send('go');
    expect(result.status).toBe('completed');
    const results = (await conversation.messages()).filter(
      (message): message is ToolResultMessage => message.role === 'toolResult',
    );
    const byId = (id: string): ToolResultMessage => {
      const found = results.find((message) => message.toolCallId === id);
      if (!found) throw new Error(`no result for ${id}`);
      return found;
    };
    expect(byId('write').isError).toBe(false);
    return { written: byId('write'), ran: byId('run'), next: byId('ping') };
  }

  const text = (message: ToolResultMessage): string => message.content[0]?.text ?? '';

  it('refuses to read /etc/passwd or anything outside the allowlist, and reads what is allowed', async () => {
    const { ran, next } = await writeAndRun(
      [
        'const results: string[] = [];',
        `for (const path of ["/etc/passwd", ${JSON.stringify(join(root, 'outside.txt'))}, ${JSON.stringify(join(allowedDir, 'passwd-link'))}, ${JSON.stringify(join(allowedDir, 'wines.csv'))}]) {`,
        '  try { results.push("read " + (await readFile(path)).trim()); } catch (error) { results.push(error.message); }',
        '}',
        'return textResult(results.join("\\n"));',
      ].join('\n'),
    );
    expect(text(ran).split('\n')).toEqual([
      `Reading "/etc/passwd" is not allowed: written tools may read only these paths: ${allowedDir}`,
      `Reading "${join(root, 'outside.txt')}" is not allowed: written tools may read only these paths: ${allowedDir}`,
      `Reading "${join(allowedDir, 'passwd-link')}" is not allowed: written tools may read only these paths: ${allowedDir}`,
      'read Barolo,Piedmont',
    ]);
    expect(text(next)).toBe('pong');
  });

  it('has no way to spawn a process', async () => {
    const marker = join(root, 'spawned');
    const { ran, next } = await writeAndRun(
      [
        'const attempts: string[] = [];',
        'const g = globalThis as any;',
        `try { g.require("node:child_process").execSync("touch ${marker}"); attempts.push("require ran"); } catch (error) { attempts.push("require: " + error.message); }`,
        `try { await (0, eval)("import('node:child_process')"); attempts.push("import ran"); } catch (error) { attempts.push("import: " + error.message); }`,
        'try { g.process.binding("spawn_sync"); attempts.push("process ran"); } catch (error) { attempts.push("process: " + error.message); }',
        'return textResult(attempts.join("\\n"));',
      ].join('\n'),
    );
    expect(text(ran).split('\n')).toEqual([
      'require: g.require is not a function',
      'import: Not supported',
      "process: Cannot read properties of undefined (reading 'binding')",
    ]);
    await expect(access(marker)).rejects.toThrow(/ENOENT/);
    expect(text(next)).toBe('pong');
  });

  it('kills an endless loop at its time limit and runs the next tool call', async () => {
    const { ran, next } = await writeAndRun('while (true) {}');
    expect(agent.worker.worker.getState()).toBe('RUNNING');
    expect(ran.isError).toBe(true);
    expect(text(ran)).toBe(
      `Tool "sandboxed${toolCount}" failed: Killed by the sandbox: it ran longer than its ${TIME_LIMIT_MS} ms time limit`,
    );
    expect(text(next)).toBe('pong');
  });

  it('kills a tool that waits forever at its time limit', async () => {
    const { ran, next } = await writeAndRun('await new Promise(() => {});\nreturn textResult("never");');
    expect(ran.isError).toBe(true);
    expect(text(ran)).toContain(`it ran longer than its ${TIME_LIMIT_MS} ms time limit`);
    expect(text(next)).toBe('pong');
  });

  it('kills a memory bomb at its memory limit and runs the next tool call', async () => {
    const { ran, next } = await writeAndRun(
      'const hog: number[][] = [];\nwhile (true) hog.push(new Array(1_000_000).fill(7));',
    );
    expect(agent.worker.worker.getState()).toBe('RUNNING');
    expect(ran.isError).toBe(true);
    expect(text(ran)).toBe(
      `Tool "sandboxed${toolCount}" failed: Killed by the sandbox: it used more than its ${MEMORY_LIMIT_MB} MB memory limit`,
    );
    expect(text(next)).toBe('pong');
  });

  it('has no network unless the worker allows it', async () => {
    const url = agent.model.baseURL;
    const { ran, next } = await writeAndRun(
      `const response = await fetch(${JSON.stringify(`${url}/models`)});\nreturn textResult(String(response.status));`,
    );
    expect(ran.isError).toBe(true);
    expect(text(ran)).toContain(
      `Network access is not allowed: this worker runs written tools without network (fetch of ${url}/models refused)`,
    );
    expect(text(next)).toBe('pong');
  });
});
