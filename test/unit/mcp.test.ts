import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpToolName } from '../../src/contract/mcpToolName.ts';
import { ToolError, textResult } from '../../src/contract/toolResult.ts';
import { loadMcpConfig } from '../../src/worker/mcp/config.ts';
import { mcpToolResult } from '../../src/worker/mcp/result.ts';
import { mcpAgentTool } from '../../src/worker/mcp/tools.ts';

describe('MCP config files', () => {
  let dir: string;
  const config = async (content: unknown): Promise<string> => {
    const file = path.join(dir, `${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
    return file;
  };
  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-mcp-config-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('reads stdio and HTTP servers, with cwd relative to the file', async () => {
    const file = await config({
      mcpServers: {
        fs: { command: 'npx', args: ['-y', 'server'], cwd: 'data' },
        crm: { url: 'http://127.0.0.1:3001/mcp', session: 'conversation', requiresApproval: ['delete'] },
      },
    });
    expect(await loadMcpConfig(file)).toEqual({
      fs: { command: 'npx', args: ['-y', 'server'], cwd: path.join(dir, 'data') },
      crm: { url: 'http://127.0.0.1:3001/mcp', session: 'conversation', requiresApproval: ['delete'] },
    });
  });

  it.each([
    ['not JSON', '{ "mcpServers": ', /MCP config .*\.json: .*JSON/],
    ['no mcpServers', { servers: {} }, /expected \{ "mcpServers"/],
    [
      'a name with __',
      { mcpServers: { my__fs: { command: 'x' } } },
      /MCP server "my__fs": a server name starts with a letter/,
    ],
    [
      'neither command nor url',
      { mcpServers: { fs: { args: [] } } },
      /give either "command" \(stdio\) or "url"/,
    ],
    ['both command and url', { mcpServers: { fs: { command: 'x', url: 'http://a/' } } }, /give either/],
    ['a URL that is not http', { mcpServers: { fs: { url: 'ftp://a/' } } }, /"url" must be http\(s\)/],
    [
      'an unknown setting',
      { mcpServers: { fs: { command: 'x', sesion: 'shared' } } },
      /unknown setting sesion/,
    ],
    [
      'an atMostOnce that is neither a flag nor a list',
      { mcpServers: { git: { command: 'x', atMostOnce: 'push' } } },
      /MCP server "git": "atMostOnce" is true, false or a list of tool names/,
    ],
    [
      'a bad session',
      { mcpServers: { fs: { command: 'x', session: 'sticky' } } },
      /"session" is "shared" or/,
    ],
  ])('refuses %s with a clear error', async (_case, content, message) => {
    await expect(loadMcpConfig(await config(content))).rejects.toThrow(message);
  });

  it('names a missing file', async () => {
    await expect(loadMcpConfig(path.join(dir, 'missing.json'))).rejects.toThrow(
      /MCP config .*missing\.json: ENOENT/,
    );
  });
});

describe('MCP tools as agent tools', () => {
  const listed = { name: 'push', inputSchema: { type: 'object' as const } };
  const run = async () => textResult('ok');
  it('are at most once when their server says so, for all its tools or the ones it lists', () => {
    expect(mcpAgentTool('git', { command: 'x', atMostOnce: true }, listed, run).atMostOnce).toBe(true);
    expect(mcpAgentTool('git', { command: 'x', atMostOnce: ['push'] }, listed, run).atMostOnce).toBe(true);
    const log = { ...listed, name: 'log' };
    expect(mcpAgentTool('git', { command: 'x', atMostOnce: ['push'] }, log, run).atMostOnce).toBeUndefined();
    expect(mcpAgentTool('git', { command: 'x' }, listed, run).atMostOnce).toBeUndefined();
  });
});

describe('MCP tool names', () => {
  it('joins server and tool with __ and replaces characters model APIs refuse', () => {
    expect(mcpToolName('fs', 'read_text_file')).toBe('fs__read_text_file');
    expect(mcpToolName('git', 'repo.log/v2')).toBe('git__repo_log_v2');
  });
});

describe('MCP tool results', () => {
  const origin = { server: 'srv', tool: 'look' };

  it('turns every kind of content into text, keeping the blocks in details', () => {
    const image = {
      type: 'image' as const,
      data: Buffer.from('12345').toString('base64'),
      mimeType: 'image/png',
    };
    const result = mcpToolResult(
      {
        content: [
          { type: 'text', text: 'hello' },
          image,
          { type: 'audio', data: Buffer.from('ab').toString('base64'), mimeType: 'audio/wav' },
          { type: 'resource', resource: { uri: 'file:///a.txt', text: 'inside a' } },
          {
            type: 'resource',
            resource: { uri: 'file:///b.bin', blob: Buffer.from('xyz').toString('base64') },
          },
          { type: 'resource_link', uri: 'file:///c', name: 'c' },
        ],
      },
      origin,
    );
    expect(result.content.map((block) => block.text)).toEqual([
      'hello',
      '[image image/png, 5 bytes]',
      '[audio audio/wav, 2 bytes]',
      '[resource file:///a.txt]\ninside a',
      '[resource file:///b.bin, binary, 3 bytes]',
      '[resource link file:///c (c)]',
    ]);
    expect(result.details).toMatchObject({
      mcp: { server: 'srv', tool: 'look', content: expect.arrayContaining([image]) },
    });
    expect(result.terminate).toBe(false);
  });

  it('uses structuredContent as the text when there is no content', () => {
    const result = mcpToolResult({ content: [], structuredContent: { temperature: 21 } }, origin);
    expect(result.content).toEqual([{ type: 'text', text: '{"temperature":21}' }]);
    expect(result.details).toMatchObject({ mcp: { structuredContent: { temperature: 21 } } });
  });

  it('throws a ToolError with the text and the details for isError', () => {
    const run = () =>
      mcpToolResult(
        { content: [{ type: 'text', text: 'no such file' }], isError: true },
        { ...origin, sessionQueue: 'q' },
      );
    expect(run).toThrow(ToolError);
    expect(run).toThrow('MCP tool "look" of server "srv" failed: no such file');
    try {
      run();
    } catch (error) {
      expect((error as ToolError).details).toEqual({
        mcp: { server: 'srv', tool: 'look', sessionQueue: 'q' },
      });
    }
  });
});
