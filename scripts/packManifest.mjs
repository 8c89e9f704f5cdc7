// The package.json that `npm pack` and `npm publish` ship: the checkout's, without what only its
// developers run (npm 11 lists a dependency's scripts on install, and `prepare` would ask to build a
// package that is built already) and without the exports that point at the unshipped sources. npm puts the package.json on disk into the tarball, so `prepack`
// (`node scripts/packManifest.mjs strip`) writes the shipped one there and keeps the checkout's
// beside it, and `postpack` (`… restore`) puts the checkout's back. A pack that failed in between
// leaves the copy behind: the next `strip` restores it first, so the checkout's is never lost.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const MANIFEST = 'package.json';
const CHECKOUT_COPY = 'package.json.before-pack';
/** Fields of the checkout's package.json that no user of the installed package runs or reads. */
const DEVELOPMENT_FIELDS = ['scripts', 'devDependencies', 'allowScripts'];
/** The export condition that points the checkout's own tests at src/, which the package does not ship. */
const SOURCE_CONDITION = 'yiem-source';

function restore() {
  if (existsSync(CHECKOUT_COPY)) renameSync(CHECKOUT_COPY, MANIFEST);
}

function strip() {
  restore();
  const text = readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  for (const field of DEVELOPMENT_FIELDS) delete manifest[field];
  for (const target of Object.values(manifest.exports ?? {})) {
    if (typeof target === 'object' && target !== null) delete target[SOURCE_CONDITION];
  }
  writeFileSync(CHECKOUT_COPY, text);
  writeFileSync(MANIFEST, `${JSON.stringify(manifest, null, 2)}\n`);
}

const commands = { strip, restore };
const command = commands[process.argv[2]];
if (!command) {
  console.error(`usage: node scripts/packManifest.mjs ${Object.keys(commands).join('|')}`);
  process.exit(2);
}
command();
