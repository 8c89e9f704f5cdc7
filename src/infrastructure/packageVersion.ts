import { readFileSync } from 'node:fs';

/**
 * The version of this yiem-agent package, from its package.json: two folders up from the sources
 * (src/infrastructure), three from the build (dist/src/infrastructure).
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
