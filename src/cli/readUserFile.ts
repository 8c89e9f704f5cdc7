import { open } from 'node:fs/promises';
import path from 'node:path';
import { MAX_USER_FILE_BYTES } from '../contract/limits.ts';
import type { CallbackHandler } from '../contract/types/callbacks.ts';

/** Files a person would not hand to a model without being asked: keys, secrets, anything outside the folder. */
const SENSITIVE = [
  /(^|\/)\.env($|\.)/,
  /(^|\/)\.ssh\//,
  /(^|\/)id_[a-z0-9]+$/,
  /\.(pem|key|p12)$/,
  /secret|password|credential/i,
];

export function isSensitivePath(relative: string): boolean {
  return (
    relative.startsWith('..') ||
    path.isAbsolute(relative) ||
    SENSITIVE.some((pattern) => pattern.test(relative))
  );
}

/**
 * `readUserFile` as `yiem chat` serves it: reads a file below `root` on this machine, and asks the
 * person first (`confirm`) when the path leaves `root` or looks like a secret.
 */
export function readUserFileHandler(
  root: string,
  confirm: (question: string) => Promise<boolean>,
): CallbackHandler {
  return async (args) => {
    const requested = String(args.path);
    const absolute = path.resolve(root, requested);
    const relative = path.relative(root, absolute);
    if (isSensitivePath(relative) && !(await confirm(`The agent wants to read ${absolute}. Allow? [y/n] `))) {
      return { text: `The user did not allow reading ${requested}.`, isError: true };
    }
    const file = await open(absolute, 'r');
    try {
      const { size } = await file.stat();
      const buffer = Buffer.alloc(Math.min(size, MAX_USER_FILE_BYTES));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
      const truncated = size > bytesRead;
      const text = buffer.subarray(0, bytesRead).toString('utf8');
      return {
        text: truncated
          ? `${text}\n[cut: the file has ${size} bytes, only the first ${bytesRead} are shown]`
          : text,
        output: { path: requested, bytes: size, truncated },
      };
    } finally {
      await file.close();
    }
  };
}
