/**
 * The Node.js releases yiem-agent runs on (package.json's `engines` says the same): 22.12 and later,
 * and 24 and later. Node 20 reached its end of life in April 2026, and the sandbox of written tools
 * (isolated-vm 6) and the chat endpoint's AI SDK 7 need Node 22. This module imports nothing, so that
 * the CLI can load it first on any Node and refuse an old one with a sentence instead of a stack trace.
 */
export const SUPPORTED_NODE = '22.12 or later (Node 22 or 24 LTS)';

/** Why this Node cannot run yiem-agent, and what to do; `undefined` when it can. */
export function unsupportedNodeProblem(version: string = process.versions.node): string | undefined {
  const [major = 0, minor = 0] = version.split('.').map(Number);
  if (major > 22 || (major === 22 && minor >= 12)) return undefined;
  return (
    `yiem-agent needs Node.js ${SUPPORTED_NODE}; this is Node ${version}. ` +
    'Install Node 24 (https://nodejs.org, or nvm install 24) and run it again.'
  );
}

/** Throws {@link unsupportedNodeProblem} as an error, for the library's entry points. */
export function assertSupportedNode(): void {
  const problem = unsupportedNodeProblem();
  if (problem) throw new Error(problem);
}
