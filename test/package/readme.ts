import { readFile } from 'node:fs/promises';

/** The text of one `## heading` section of a Markdown file, up to the next `## ` heading. */
export async function readmeSection(file: string, heading: string): Promise<string> {
  const markdown = await readFile(file, 'utf8');
  const start = markdown.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${file} has no section "## ${heading}"`);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end < 0 ? undefined : end);
}

/**
 * The documented list of a package's entries (docs/api.md): lines of the form
 * ``- `yiem-agent/worker` (what for): `a`, `b` `` give each entry the names it exports.
 */
export function documentedExports(section: string): Record<string, string[]> {
  const entries: Record<string, string[]> = {};
  for (const line of section.split('\n')) {
    const match = /^- `(yiem-agent[^`]*)`[^:]*: (.*)$/.exec(line);
    if (!match?.[1] || !match[2]) continue;
    entries[match[1]] = [...match[2].matchAll(/`([^`]+)`/g)].map((name) => name[1] ?? '');
  }
  return entries;
}
