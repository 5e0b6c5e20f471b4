// Copies non-TypeScript assets the plugin needs at run time into dist/.
import { cp, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';

if (existsSync('src/assets')) {
  await mkdir('dist/assets', { recursive: true });
  await cp('src/assets', 'dist/assets', { recursive: true });
}

// The settings UI plays doorbell recordings with hls.js. The page can only load files under
// homebridge-ui/public/, so the light build (no subtitles, alternate audio or DRM: a recording needs
// none) is vendored there at build time; hls.js stays a devDependency and users install nothing more.
await mkdir('homebridge-ui/public/vendor', { recursive: true });
await cp('node_modules/hls.js/dist/hls.light.min.js', 'homebridge-ui/public/vendor/hls.light.min.js');
