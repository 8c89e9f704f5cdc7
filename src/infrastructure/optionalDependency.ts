import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * Loads a package that only one feature needs (a peer dependency the application installs when it
 * uses that feature), on first use. Missing, it is an error naming the feature and what to install.
 */
export function requireOptional<T>(name: string, feature: string, install: string = name): T {
  try {
    return requireHere(name) as T;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'MODULE_NOT_FOUND' && String(error).includes(name)) {
      throw new Error(`${feature} needs the package ${name}, which is not installed: npm install ${install}`);
    }
    throw error;
  }
}
