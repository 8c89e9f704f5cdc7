import { randomUUID } from 'node:crypto';
import { link, readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';

/**
 * Writes `<dir>/<fileName>` only if no such file exists, and atomically: the content goes to a
 * temporary file opened with 'wx', which is then hard-linked to its name. link() never replaces an
 * existing file, and a worker sharing the directory never sees a half-written tool.
 * Returns the existing content instead when the name is taken.
 */
export async function writeFileOnce(
  dir: string,
  fileName: string,
  content: string,
): Promise<{ written: true; file: string } | { written: false; file: string; existing: string }> {
  const root = resolve(dir);
  const file = resolve(root, fileName);
  if (dirname(file) !== root)
    throw new Error(`Refusing to write ${fileName}: it is not a file name inside ${root}`);
  const temporary = join(root, `.${fileName}.${randomUUID()}.tmp`);
  await writeFile(temporary, content, { flag: 'wx' });
  try {
    await link(temporary, file);
    return { written: true, file };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    return { written: false, file, existing: await readFile(file, 'utf8') };
  } finally {
    await rm(temporary, { force: true });
  }
}
