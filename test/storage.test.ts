import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod/v3';

import { Storage, StorageError } from '../src/storage.js';
import { tsChildArgs } from './harness/ts-child.js';

const dirs: string[] = [];
async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'lock-access-storage-'));
  dirs.push(dir);
  return dir;
}
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

const record = z.object({ n: z.number(), payload: z.string(), digest: z.string() });

describe('storage: atomic JSON files under <storagePath>/lock-access/', () => {
  it('lives in the lock-access folder, files mode 0600 and folder 0700', async () => {
    const storagePath = await tempDir();
    const storage = Storage.under(storagePath);
    await storage.write('tokens.json', { a: 1 });
    expect(storage.dir).toBe(join(storagePath, 'lock-access'));
    expect((await stat(storage.file('tokens.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(storage.dir)).mode & 0o777).toBe(0o700);
    expect(await storage.read('tokens.json', z.object({ a: z.number() }))).toEqual({ a: 1 });
  });

  it('reads a missing file as undefined and refuses a corrupt one with a clear error', async () => {
    const storage = new Storage(await tempDir());
    expect(await storage.read('none.json', record)).toBeUndefined();
    await storage.write('bad.json', { wrong: true });
    await expect(storage.read('bad.json', record)).rejects.toBeInstanceOf(StorageError);
  });

  it('writeList: the same text as a compact write, mode 0600, written in chunks (a list of 300 KB), no temp file left', async () => {
    const storage = new Storage(await tempDir());
    const items = Array.from({ length: 3000 }, (_, i) => ({ i, text: `entry ${String(i)} ${'x'.repeat(80)}`, gone: undefined, at: i % 7 === 0 ? null : i }));
    const value = { version: 3, note: 'kept', entries: items };
    await storage.write('whole.json', value, { compact: true });
    await storage.writeList('listed.json', { version: 3, note: 'kept' }, 'entries', items);
    const listed = await readFile(storage.file('listed.json'), 'utf8');
    expect(listed.length).toBeGreaterThan(300_000);
    expect(listed).toBe(await readFile(storage.file('whole.json'), 'utf8'));
    expect((await stat(storage.file('listed.json'))).mode & 0o777).toBe(0o600);
    // An empty list, and elements with no JSON form, as JSON.stringify writes them.
    await storage.writeList('empty.json', {}, 'entries', []);
    expect(await readFile(storage.file('empty.json'), 'utf8')).toBe('{"entries":[]}\n');
    await storage.writeList('odd.json', { v: 1 }, 'list', [undefined, () => 1, 2]);
    expect(await readFile(storage.file('odd.json'), 'utf8')).toBe(`${JSON.stringify({ v: 1, list: [undefined, () => 1, 2] })}\n`);
    expect((await readdir(storage.dir)).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('writeList: a list that fails while it is written leaves the old file whole and no temp file', async () => {
    const storage = new Storage(await tempDir());
    await storage.writeList('events.json', { version: 1 }, 'entries', [{ old: true }]);
    function* failing(): Generator {
      for (let i = 0; i < 5000; i += 1) yield { i, padding: 'y'.repeat(100) };
      throw new Error('the list broke halfway');
    }
    await expect(storage.writeList('events.json', { version: 1 }, 'entries', failing())).rejects.toThrow('the list broke halfway');
    expect(await readFile(storage.file('events.json'), 'utf8')).toBe('{"version":1,"entries":[{"old":true}]}\n');
    expect(await readdir(storage.dir)).toEqual(['events.json']);
  });

  it('refuses file names that would leave the folder', () => {
    const storage = new Storage('/nowhere');
    expect(() => storage.file('../x.json')).toThrow(StorageError);
  });

  it('a child process killed while writing in a loop never leaves a torn or empty file', async () => {
    const dir = await tempDir();
    const storage = new Storage(dir);
    let lastN = 0;
    for (let round = 0; round < 6; round += 1) {
      // Plain node runs the writer in this very process, so SIGKILL reaches it (the tsx CLI would fork a child).
      const child = spawn(process.execPath, await tsChildArgs('test/fixtures/storage-writer.ts', dir), { stdio: ['ignore', 'pipe', 'inherit'] });
      await new Promise<void>((resolve, reject) => {
        child.stdout.once('data', () => { resolve(); });
        child.once('error', reject);
      });
      // Let it write for a varying moment, then kill it without warning.
      await new Promise((resolve) => setTimeout(resolve, 40 + round * 37));
      child.kill('SIGKILL');
      await new Promise((resolve) => child.once('exit', resolve));
      const value = await storage.read('state.json', record);
      if (value === undefined) continue;
      expect(createHash('sha256').update(value.payload).digest('hex')).toBe(value.digest);
      expect(value.payload).toBe(String(value.n).repeat(value.payload.length / String(value.n).length));
      lastN = value.n;
    }
    expect(lastN).toBeGreaterThan(0);
    // Leftover temp files are allowed; the real file is always whole.
    expect((await readdir(dir)).includes('state.json')).toBe(true);
    // Six node processes started one after another: seconds on a loaded machine.
  }, 120_000);
});
