import { createRequire } from 'node:module';

const requireHere = createRequire(import.meta.url);

/**
 * A package that one feature needs is missing or cannot load here. Retrying cannot help: the same
 * process loads the same files, so a tool call that meets it fails at once (`name` is matched by the
 * activities, as for `ToolError`).
 */
export class OptionalDependencyError extends Error {
  override name = 'OptionalDependencyError';
}

/**
 * Loads a package that only one feature needs (a peer dependency the application installs when it
 * uses that feature), on first use. Missing, or a native addon built for another Node or platform, it
 * is an {@link OptionalDependencyError} naming the feature, the package, this Node and what to install.
 */
export function requireOptional<T>(name: string, feature: string, install: string = name): T {
  try {
    return requireHere(name) as T;
  } catch (error) {
    throw optionalDependencyError(error, name, feature, install) ?? error;
  }
}

function optionalDependencyError(
  error: unknown,
  name: string,
  feature: string,
  install: string,
): OptionalDependencyError | undefined {
  const { code } = error as NodeJS.ErrnoException;
  const text = String((error as Error | undefined)?.message ?? error);
  if (code === 'MODULE_NOT_FOUND' && text.includes(name)) {
    return new OptionalDependencyError(
      `${feature} needs the package ${name}, which is not installed: npm install ${install}`,
    );
  }
  if (code === 'ERR_DLOPEN_FAILED' || NATIVE_LOAD_FAILURE.test(text)) {
    // Node's own words, on one line, without its generic advice (the sentence below is specific).
    const reason = text.replace(/\s+/g, ' ').replace(/\.? Please try re-compiling.*$/, '');
    return new OptionalDependencyError(
      `${feature} needs the package ${name}, whose native addon cannot load on Node ${process.versions.node} ` +
        `(ABI ${process.versions.modules}, ${process.platform}-${process.arch}): ${reason}. ` +
        `Install a build for this Node: npm install ${install} (or npm rebuild ${name}, with ` +
        'npm_config_nodedir set to this Node’s headers when it compiles)',
    );
  }
  return undefined;
}

/** What Node says when a `.node` file was built for another Node, platform or C library. */
const NATIVE_LOAD_FAILURE =
  /did not self-register|NODE_MODULE_VERSION|undefined symbol|invalid ELF header|wrong ELF class|GLIBC_|No native build was found/;
