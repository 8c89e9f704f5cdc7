import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, inject, it } from 'vitest';
import { YIEM_FROM_SOURCES } from '../support/cli.ts';

/** The console serves the built page: `npm run build` (CI's `npm ci`) writes dist/console. */
describe('yiem console', () => {
  it('starts, prints the address of its page, serves it and its API, and stops on SIGTERM', async () => {
    const child = spawn(
      process.execPath,
      [
        ...YIEM_FROM_SOURCES,
        'console',
        '--address',
        inject('temporalAddress'),
        '--port',
        '0',
        '--task-queue',
        'console-cli',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, YIEM_UI_URL: 'http://127.0.0.1:8233' } },
    );
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const printed = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        const url = /^Console (http:\/\/127\.0\.0\.1:\d+\/) /m.exec(stdout)?.[1];
        if (url) resolve(url);
      });
      child.once('exit', () => reject(new Error(`yiem console exited: ${stdout}${stderr}`)));
    });
    try {
      expect(stdout).toContain('(task queue console-cli). Press Ctrl-C to stop.');
      const page = await fetch(printed);
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<div id="root">');
      const info = await fetch(`${printed}api/console/info`);
      expect(await info.json()).toEqual({
        namespace: 'default',
        webUiUrl: 'http://127.0.0.1:8233',
        canStart: true,
      });
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = await once(child, 'exit');
    expect(code).toBe(0);
  });
});
