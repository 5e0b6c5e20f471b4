// The build's last step: dist/index.js, the module Homebridge loads, becomes one file with every
// module of the plugin in it (the packages it uses stay imports). Loading 240 small modules took
// Homebridge about 0.4 s of CPU at each start and left about 1 MiB of heap and 5 MiB of resident
// memory more than one file with the same code: each module costs a resolution, a package scope
// lookup, a read and a module record. The settings server's part is bundled the same way.
import { build } from 'esbuild';

// The settings server's part too (homebridge-ui/server.js imports it each time the settings open).
for (const entry of ['dist/index.js', 'dist/settings-ui/server-parts.js']) await build({
  entryPoints: [entry],
  outfile: entry,
  allowOverwrite: true,
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: 'node20.18',
  // Dependencies are installed beside the plugin and loaded from there, as before.
  packages: 'external',
  // Chained to the TypeScript build's maps: stack traces in development point into src/.
  sourcemap: true,
  logLevel: 'warning',
});
