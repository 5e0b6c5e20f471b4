// Copies non-TypeScript assets the plugin needs at run time into dist/.
import { cp, mkdir } from 'node:fs/promises';
import { existsSync } from 'node:fs';

if (existsSync('src/assets')) {
  await mkdir('dist/assets', { recursive: true });
  await cp('src/assets', 'dist/assets', { recursive: true });
}
