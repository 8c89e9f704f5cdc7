import { execFile } from 'node:child_process';
import { chown, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** A private PostgreSQL instance in a directory of its own, trusting local connections (tests only). */
export interface PrivatePostgres {
  port: number;
  user: string;
  stop(): Promise<void>;
}

/**
 * `initdb` into `dir` and start the server on 127.0.0.1:`port`. PostgreSQL refuses to run as root, so
 * as root it runs as the `postgres` user that Debian's package creates.
 */
export async function startPrivatePostgres(
  binDir: string,
  dir: string,
  port: number,
): Promise<PrivatePostgres> {
  const dataDir = path.join(dir, 'data');
  const asRoot = process.getuid?.() === 0;
  await mkdir(dataDir, { recursive: true });
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: group } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout), Number(group));
    await chown(dataDir, Number(stdout), Number(group));
  }
  const pg = (tool: string, args: string[]) =>
    asRoot
      ? run('runuser', ['-u', 'postgres', '--', path.join(binDir, tool), ...args])
      : run(path.join(binDir, tool), args);
  const user = 'temporal';
  await pg('initdb', ['-D', dataDir, '-U', user, '--auth=trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  await pg('pg_ctl', ['-D', dataDir, '-l', path.join(dir, 'postgres.log'), '-o', options, '-w', 'start']);
  return {
    port,
    user,
    async stop() {
      await pg('pg_ctl', ['-D', dataDir, '-m', 'immediate', '-w', 'stop']).catch(() => undefined);
    },
  };
}
