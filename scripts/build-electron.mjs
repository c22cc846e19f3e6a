// Bundles the Electron host: electron/desktop/main.ts → dist/electron/main.cjs and
// electron/desktop/preload.ts → dist/electron/preload.cjs (package.json "main").
//
//   node scripts/build-electron.mjs [--outdir DIR] [--only main|preload]
//
// Packages with native parts, wasm or heavy runtime loading (werift, opusscript, undici, ws) stay
// external and are required from node_modules at run time; everything else is bundled. The preload
// runs in a sandboxed renderer, where `require` knows only `electron` and a few Node modules, so it
// is bundled whole with `electron` as its only external.
import { build } from 'esbuild';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const { values } = parseArgs({
  options: { outdir: { type: 'string' }, only: { type: 'string' } },
  strict: true,
});
const outdir = resolve(values.outdir ?? join(root, 'dist', 'electron'));
if (values.only !== undefined && values.only !== 'main' && values.only !== 'preload') {
  console.error(`build-electron: --only must be "main" or "preload", got "${values.only}"`);
  process.exit(2);
}

const common = {
  absWorkingDir: root,
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: 'node20',
  sourcemap: 'linked',
  logLevel: 'warning',
  // import.meta is empty in a CommonJS bundle. Modules that locate files next to their source
  // (sandbox/customer-voice.ts) expect exactly that and fall back on their own; pointing it at the
  // bundle would send them to dist/ instead.
  logOverride: { 'empty-import-meta': 'silent' },
};

const targets = {
  main: {
    ...common,
    entryPoints: [join(root, 'electron/desktop/main.ts')],
    outfile: join(outdir, 'main.cjs'),
    external: ['electron', 'werift', 'werift/*', 'opusscript', 'undici', 'ws', 'bufferutil', 'utf-8-validate'],
  },
  preload: {
    ...common,
    entryPoints: [join(root, 'electron/desktop/preload.ts')],
    outfile: join(outdir, 'preload.cjs'),
    external: ['electron'],
    // zod (for the command names in shared/api.ts) is most of it; minified, every page load parses less.
    minify: true,
  },
};

const selected = values.only ? [values.only] : ['main', 'preload'];
try {
  await Promise.all(selected.map((name) => build(targets[name])));
  console.log(`build-electron: ${selected.map((name) => targets[name].outfile.replace(`${root}/`, '')).join(', ')}`);
} catch {
  // esbuild has already printed the errors with their locations.
  process.exit(1);
}
