import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { afterEach, describe, expect, it } from 'vitest';

import { fileAbove } from '../../src/util/file-above.js';

describe('fileAbove: a shipped file found from any depth of the module that asks', () => {
  const made: string[] = [];
  afterEach(async () => {
    for (const dir of made.splice(0)) await rm(dir, { recursive: true, force: true });
  });

  async function packageTree(): Promise<string> {
    const root = await mkdtemp(join(tmpdir(), 'file-above-'));
    made.push(root);
    await writeFile(join(root, 'package.json'), '{"name":"homebridge-lock-access"}');
    await mkdir(join(root, 'dist', 'assets'), { recursive: true });
    await mkdir(join(root, 'dist', 'homekit'), { recursive: true });
    await writeFile(join(root, 'dist', 'assets', 'placeholder.jpg'), 'jpg');
    return root;
  }

  it('the bundle (dist/index.js) and a module of its own (dist/homekit/x.js) find the same package.json and picture', async () => {
    const root = await packageTree();
    for (const module of [join(root, 'dist', 'index.js'), join(root, 'dist', 'homekit', 'snapshot-cache.js')]) {
      const url = pathToFileURL(module).href;
      expect(fileAbove(url, 'package.json')).toBe(join(root, 'package.json'));
      expect(fileAbove(url, 'assets/placeholder.jpg')).toBe(join(root, 'dist', 'assets', 'placeholder.jpg'));
    }
  });

  it('the sources find the repository\'s package.json and src/assets', () => {
    const url = new URL('../../src/homekit/snapshot-cache.ts', import.meta.url).href;
    expect(fileAbove(url, 'package.json')).toBe(join(import.meta.dirname, '..', '..', 'package.json'));
    expect(fileAbove(url, 'assets/placeholder.jpg')).toBe(join(import.meta.dirname, '..', '..', 'src', 'assets', 'placeholder.jpg'));
  });

  it('a file that is nowhere above says which and from where', async () => {
    const root = await packageTree();
    const url = pathToFileURL(join(root, 'dist', 'index.js')).href;
    expect(() => fileAbove(url, 'assets/missing.jpg')).toThrow(`assets/missing.jpg was not found in ${join(root, 'dist')} or any folder above it`);
  });
});
