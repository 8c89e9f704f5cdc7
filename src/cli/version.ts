import { readFileSync } from 'node:fs';

/**
 * The version of the yiem-agent package this CLI belongs to, from its package.json: two folders up
 * from the sources (src/cli), three from the build (dist/src/cli).
 */
export function packageVersion(): string {
  for (const up of ['../../package.json', '../../../package.json']) {
    try {
      const manifest = JSON.parse(readFileSync(new URL(up, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (manifest.name === 'yiem-agent' && manifest.version) return manifest.version;
    } catch {
      // Not this folder: the other layout.
    }
  }
  return 'unknown';
}
