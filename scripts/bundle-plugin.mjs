// `npm run build`: esbuild makes the two modules the package ships straight from src/, each one file
// with every module of the plugin it needs (the packages it uses stay imports):
// - dist/index.js, the module Homebridge loads. Loading 240 small modules took Homebridge about
//   0.4 s of CPU at each start and left about 1 MiB of heap and 5 MiB of resident memory more than
//   one file with the same code: each module costs a resolution, a package scope lookup, a read and
//   a module record.
// - dist/settings-ui/server-parts.js, what the settings server (homebridge-ui/server.js) imports
//   each time the settings open.
// esbuild only strips the types: `npm run check` (and `npm test`) type-check src/. Compiling src/
// with TypeScript first, as the build did, checked the same types a second time in every gate.
import { build } from 'esbuild';

const ENTRIES = { index: 'src/index.ts', 'settings-ui/server-parts': 'src/settings-ui/server-parts.ts' };

await build({
  entryPoints: ENTRIES,
  outdir: 'dist',
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.18',
  // Dependencies are installed beside the plugin and loaded from there.
  packages: 'external',
  // Stack traces in development point into src/ (node --enable-source-maps).
  sourcemap: true,
  legalComments: 'none',
  logLevel: 'warning',
});
